//! Single values and their types: `const`, `enum`, lists of types, and `null` folded into
//! a type.

use super::*;

impl<'a> Adaptation<'a> {
    /// `const` where the profile has none.
    pub(super) fn constant(
        &mut self,
        value: &Value,
        source: &Map<String, Value>,
        at: &str,
        built: &mut AdaptedMembers,
    ) {
        let kind = value_type(value).name();
        let as_enum = match self.profile.enum_values.rule {
            EnumValues::Any => true,
            EnumValues::StringsAndNumbers => value.is_string() || value.is_number(),
            EnumValues::Strings => value.is_string(),
        };
        if as_enum && self.profile.supports("enum") && !source.contains_key("enum") {
            built
                .out
                .insert("enum".into(), Value::Array(vec![value.clone()]));
            if !source.contains_key("type") && self.profile.is_openapi() {
                built.out.insert("type".into(), Value::String(kind.into()));
            }
            self.report(
                at,
                "const",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                format!(
                    "{} has no const: written as an enum of one value",
                    self.name()
                ),
            );
            return;
        }
        if value.is_null() && !source.contains_key("type") {
            built
                .out
                .insert("type".into(), Value::String("null".into()));
            self.report(
                at,
                "const",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                format!(
                    "{} has no const: const null is written \"type\": \"null\"",
                    self.name()
                ),
            );
            return;
        }
        if !source.contains_key("type") && self.profile.supports("type") {
            built.out.insert("type".into(), Value::String(kind.into()));
        }
        self.move_to_description("const", value, at, built, Accepts::More, None);
    }

    /// `enum`, kept or moved into the description as the profile's enum values allow.
    pub(super) fn enumeration(
        &mut self,
        value: &Value,
        source: &Map<String, Value>,
        at: &str,
        built: &mut AdaptedMembers,
    ) {
        let Value::Array(values) = value else {
            built.out.insert("enum".into(), value.clone());
            return;
        };
        if !self.profile.supports("enum") {
            self.move_to_description("enum", value, at, built, Accepts::More, None);
            return;
        }
        match self.profile.enum_values.rule {
            EnumValues::Any => {
                built.out.insert("enum".into(), value.clone());
            }
            EnumValues::StringsAndNumbers => {
                if values.iter().all(|v| v.is_string() || v.is_number()) {
                    built.out.insert("enum".into(), value.clone());
                } else {
                    self.move_to_description(
                        "enum",
                        value,
                        at,
                        built,
                        Accepts::More,
                        Some("its enum takes strings and numbers only".into()),
                    );
                }
            }
            EnumValues::Strings => {
                let strings: Vec<Value> =
                    values.iter().filter(|v| v.is_string()).cloned().collect();
                let nulls = values.iter().filter(|v| v.is_null()).count();
                if !strings.is_empty() && strings.len() + nulls == values.len() {
                    built.out.insert("enum".into(), Value::Array(strings));
                    if !source.contains_key("type") {
                        built
                            .out
                            .insert("type".into(), Value::String("string".into()));
                    }
                    if nulls > 0 {
                        built.out.insert("nullable".into(), Value::Bool(true));
                        self.report(
                            at,
                            "enum",
                            LossAction::Rewritten,
                            Accepts::Same,
                            Topic::Rewrite,
                            format!(
                                "{} takes string enum values only: null is written \"nullable\": true",
                                self.name()
                            ),
                        );
                    }
                } else {
                    self.move_to_description(
                        "enum",
                        value,
                        at,
                        built,
                        Accepts::More,
                        Some("its enum takes strings only".into()),
                    );
                }
            }
        }
    }

    /// A type list, for a profile that takes one type: `nullable` for a type and null, else
    /// `anyOf` with one branch per type carrying that type's keywords.
    pub(super) fn split_type_list(
        &mut self,
        source: &Map<String, Value>,
        types: &[Value],
        at: &str,
        level: usize,
        ready: &mut Map<String, Value>,
    ) -> Step<Map<String, Value>> {
        let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
        let has_null = names.contains(&"null");
        let others: Vec<&str> = names.iter().copied().filter(|t| *t != "null").collect();
        let mut map = source.clone();
        match others.as_slice() {
            [] => {
                map.insert("type".into(), Value::String("null".into()));
            }
            [one] => {
                map.insert("type".into(), Value::String((*one).into()));
                if has_null {
                    map.insert("nullable".into(), Value::Bool(true));
                }
            }
            several => {
                if map.contains_key("anyOf") || map.contains_key("oneOf") {
                    return refuse(
                        at,
                        format!(
                            "a type list beside anyOf/oneOf cannot be written with one type per \
                             schema for {}",
                            self.name()
                        ),
                    );
                }
                map.shift_remove("type");
                let mut branches = Vec::new();
                for t in several {
                    let mut branch = Map::new();
                    branch.insert("type".into(), Value::String((*t).into()));
                    for k in keywords_of_type(t) {
                        if let Some(v) = source.get(k) {
                            branch.insert(k.into(), v.clone());
                        }
                    }
                    branches.push(self.node(&Value::Object(branch), at, level + 1, false)?);
                }
                map.retain(|k, _| !is_type_specific(k));
                ready.insert("anyOf".into(), Value::Array(branches));
                if has_null {
                    map.insert("nullable".into(), Value::Bool(true));
                }
            }
        }
        self.report(
            at,
            "type",
            LossAction::Rewritten,
            Accepts::Same,
            Topic::Rewrite,
            format!(
                "{} takes one type per schema: the type list {} is written as {}",
                self.name(),
                Value::Array(types.to_vec()),
                if others.len() > 1 {
                    "anyOf with one type per branch"
                } else if has_null && others.len() == 1 {
                    "one type with \"nullable\": true"
                } else {
                    "one type"
                }
            ),
        );
        Ok(map)
    }
}

/// Whether the branches of a `oneOf` take values of distinct types (so no value can match two).
pub(super) fn distinct_types(branches: &Value) -> bool {
    let Some(list) = branches.as_array() else {
        return false;
    };
    let mut seen: Vec<&str> = Vec::new();
    for branch in list {
        let Some(Value::String(t)) = branch.get("type") else {
            return false;
        };
        let t = t.as_str();
        let overlaps = seen.contains(&t)
            || (t == "integer" && seen.contains(&"number"))
            || (t == "number" && seen.contains(&"integer"));
        if overlaps {
            return false;
        }
        seen.push(t);
    }
    true
}

/// A property schema that also accepts `null`.
pub(super) fn nullable(schema: Value) -> Value {
    let null_branch = || serde_json::json!({"type": "null"});
    let Value::Object(mut map) = schema else {
        return serde_json::json!({"anyOf": [schema, null_branch()]});
    };
    let plain_anyof = map.contains_key("anyOf")
        && map
            .keys()
            .all(|k| matches!(k.as_str(), "anyOf" | "description" | "title"));
    if plain_anyof {
        if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
            if !branches.iter().any(|b| b == &null_branch()) {
                branches.push(null_branch());
            }
        }
        return Value::Object(map);
    }
    let simple_type = match map.get("type") {
        Some(Value::String(_)) | Some(Value::Array(_)) => {
            !map.contains_key("const") && !map.contains_key("anyOf") && !map.contains_key("$ref")
        }
        _ => false,
    };
    if !simple_type {
        return serde_json::json!({"anyOf": [Value::Object(map), null_branch()]});
    }
    let null = Value::String("null".into());
    match map.get_mut("type") {
        Some(Value::String(t)) if t == "null" => {}
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert(
                "type".into(),
                Value::Array(vec![Value::String(t), null.clone()]),
            );
        }
        Some(Value::Array(list)) if !list.contains(&null) => list.push(null.clone()),
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    }
    Value::Object(map)
}
