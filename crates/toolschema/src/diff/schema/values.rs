//! The values a schema lists or names: `type`, `enum` and `const`.

use super::*;

impl SchemaDiff<'_> {
    /// An `enum` on one side and a `const` on the other that accept the same values
    /// (`enum: ["a"]` and `const: "a"`): reported once as rewritten, and `true`, so that neither
    /// keyword is reported alone as added or removed.
    pub(super) fn listed_values_alike(
        &mut self,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        pointer: &str,
        path: &str,
    ) -> bool {
        let (Some((old_key, old_values)), Some((new_key, new_values))) =
            (listed_values(old), listed_values(new))
        else {
            return false;
        };
        let within =
            |a: &[&Value], b: &[&Value]| a.iter().all(|v| b.iter().any(|w| same_value(v, w)));
        if old_key == new_key
            || !within(&old_values, &new_values)
            || !within(&new_values, &old_values)
        {
            return false;
        }
        let (o, n) = (old.get(old_key), new.get(new_key));
        let message = format!(
            "{old_key} {} of {} rewritten as {new_key} {}, accepting the same values",
            short(o),
            self.subject(path),
            short(n)
        );
        let at = push_segment(pointer, new_key);
        self.push_class(
            ChangeCode::SchemaRewritten,
            ChangeClass::Compatible,
            &at,
            message,
            o,
            n,
        );
        true
    }

    pub(super) fn types(&mut self, o: Option<&Value>, n: Option<&Value>, at: &str, path: &str) {
        let malformed = |v: Option<&Value>| match v {
            None | Some(Value::String(_)) => false,
            Some(Value::Array(types)) => !types.iter().all(Value::is_string),
            Some(_) => true,
        };
        if malformed(o) || malformed(n) {
            return self.constraint("type", o, n, at, path);
        }
        let old = type_set(o);
        let new = type_set(n);
        let covered = |set: &Option<Vec<String>>, t: &str| match set {
            None => true,
            Some(set) => set
                .iter()
                .any(|s| s == t || (t == "integer" && s == "number")),
        };
        let all_covered = |from: &Option<Vec<String>>, by: &Option<Vec<String>>| match from {
            None => by.is_none(),
            Some(types) => types.iter().all(|t| covered(by, t)),
        };
        let narrower = all_covered(&new, &old);
        let wider = all_covered(&old, &new);
        let (code, effect, verb) = match (narrower, wider) {
            (true, true) => return,
            (true, false) => (ChangeCode::TypeNarrowed, Effect::Narrows, "narrowed"),
            (false, true) => (ChangeCode::TypeWidened, Effect::Widens, "widened"),
            (false, false) => (ChangeCode::TypeChanged, Effect::Changes, "changed"),
        };
        let message = format!(
            "type of {} {verb} from {} to {}",
            self.subject(path),
            show_types(&old),
            show_types(&new)
        );
        self.push(code, effect, at, message, o.cloned(), n.cloned());
    }

    pub(super) fn enumeration(
        &mut self,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) {
        let subject = self.subject(path);
        match (o.and_then(Value::as_array), n.and_then(Value::as_array)) {
            (Some(old), Some(new)) => {
                for value in old.iter().filter(|v| !new.iter().any(|w| same_value(v, w))) {
                    let message =
                        format!("enum value {} removed from {subject}", short(Some(value)));
                    self.push(
                        ChangeCode::EnumValueRemoved,
                        Effect::Narrows,
                        at,
                        message,
                        Some(value.clone()),
                        None,
                    );
                }
                for value in new.iter().filter(|v| !old.iter().any(|w| same_value(v, w))) {
                    let message = format!("enum value {} added to {subject}", shown(value));
                    self.push_values(
                        ChangeCode::EnumValueAdded,
                        Effect::Widens,
                        at,
                        message,
                        None,
                        Some(value),
                    );
                }
            }
            (None, Some(_)) if o.is_none() => {
                let message = format!("{subject} is now limited to the enum values {}", short(n));
                self.push_values(
                    ChangeCode::EnumValueRemoved,
                    Effect::Narrows,
                    at,
                    message,
                    None,
                    n,
                );
            }
            (Some(_), None) if n.is_none() => {
                let message =
                    format!("enum of {subject} removed: any value of its type is accepted");
                self.push(
                    ChangeCode::EnumValueAdded,
                    Effect::Widens,
                    at,
                    message,
                    o.cloned(),
                    None,
                );
            }
            _ => self.constraint("enum", o, n, at, path),
        }
    }
}

/// The values an `enum` alone or a `const` alone lists, with the keyword.
pub(super) fn listed_values(schema: &Map<String, Value>) -> Option<(&'static str, Vec<&Value>)> {
    match (schema.get("enum"), schema.get("const")) {
        (Some(Value::Array(values)), None) => Some(("enum", values.iter().collect())),
        (None, Some(value)) => Some(("const", vec![value])),
        _ => None,
    }
}

/// The types a `type` keyword allows; `None` when any type is.
pub(super) fn type_set(value: Option<&Value>) -> Option<Vec<String>> {
    match value? {
        Value::String(t) => Some(vec![t.clone()]),
        Value::Array(types) => Some(
            types
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        ),
        _ => None,
    }
}

pub(super) fn show_types(types: &Option<Vec<String>>) -> String {
    match types {
        None => "any".into(),
        Some(types) if types.is_empty() => "none".into(),
        Some(types) => visible(&types.join("|")),
    }
}
