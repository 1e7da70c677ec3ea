//! Objects: `properties`, `required`, what undeclared members may be, and draft-07
//! `dependencies`.

use super::*;

impl<'a> Adaptation<'a> {
    /// draft-07 `dependencies`, written as 2020-12's `dependentRequired` and `dependentSchemas`.
    pub(super) fn dependencies(
        &mut self,
        value: &Value,
        at: &str,
        level: usize,
        built: &mut AdaptedMembers,
    ) -> Step<()> {
        let Value::Object(map) = value else {
            return Ok(());
        };
        let mut names = Map::new();
        let mut schemas = Map::new();
        for (k, v) in map {
            if v.is_array() {
                names.insert(k.clone(), v.clone());
            } else {
                schemas.insert(k.clone(), v.clone());
            }
        }
        self.report(
            at,
            "dependencies",
            LossAction::Rewritten,
            Accepts::Same,
            Topic::Rewrite,
            "draft-07 dependencies is written dependentRequired/dependentSchemas, as JSON Schema \
             2020-12 names it"
                .into(),
        );
        let source = Map::new();
        if !names.is_empty() {
            let names = Value::Object(names);
            if self.profile.supports("dependentRequired") {
                built.out.insert("dependentRequired".into(), names);
            } else {
                self.unsupported("dependentRequired", &names, &source, at, built);
            }
        }
        if !schemas.is_empty() {
            let schemas = Value::Object(schemas);
            if self.profile.supports("dependentSchemas") {
                let adapted = self.keyword_value("dependentSchemas", &schemas, at, level)?;
                built.out.insert("dependentSchemas".into(), adapted);
            } else {
                self.unsupported("dependentSchemas", &schemas, &source, at, built);
            }
        }
        Ok(())
    }

    /// Objects: what strict mode and the profile's requirements ask of them.
    pub(super) fn object_rules(
        &mut self,
        source: &Map<String, Value>,
        out: &mut Map<String, Value>,
        at: &str,
        is_root: bool,
    ) -> Step<()> {
        if !is_object_schema(source) && !is_object_schema(out) {
            return Ok(());
        }
        let declared: Vec<String> = out
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let required: Vec<String> = match out.get("required") {
            Some(Value::Array(r)) => r
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        // Sets for the lookups: a schema may declare and require tens of thousands of names.
        let declared_names: std::collections::HashSet<&str> =
            declared.iter().map(String::as_str).collect();
        let required_names: std::collections::HashSet<&str> =
            required.iter().map(String::as_str).collect();
        let undeclared: Vec<&String> = required
            .iter()
            .filter(|n| !declared_names.contains(n.as_str()))
            .collect();
        let needs_properties =
            self.profile.requirements.rule.object_properties && admits(out, "object");
        if needs_properties && !out.contains_key("properties") {
            out.insert("properties".into(), Value::Object(Map::new()));
            self.report(
                at,
                "properties",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Missing,
                format!(
                    "{} rejects an object schema without properties: \"properties\": {{}} is \
                     added (same meaning)",
                    self.name()
                ),
            );
        }
        if self.profile.requirements.rule.declared_required && !undeclared.is_empty() {
            {
                let list = quoted(&undeclared);
                self.report(
                    at,
                    "required",
                    LossAction::Dropped,
                    Accepts::More,
                    Topic::Unsupported,
                    format!(
                        "{} refuses required names that properties does not declare: {list} no \
                         longer required",
                        self.name()
                    ),
                );
                let kept: Vec<Value> = required
                    .iter()
                    .filter(|n| declared_names.contains(n.as_str()))
                    .map(|n| Value::String(n.clone()))
                    .collect();
                if kept.is_empty() {
                    out.shift_remove("required");
                } else {
                    out.insert("required".into(), Value::Array(kept));
                }
            }
        }
        let Some(strict) = self.profile.strict.map(|s| s.rule) else {
            return Ok(());
        };
        if !out.contains_key("type") {
            out.insert("type".into(), Value::String("object".into()));
            self.report(
                at,
                "type",
                LossAction::Rewritten,
                Accepts::Less,
                Topic::Strict,
                format!(
                    "{} needs a type on every schema: this one has properties, so it is \"type\": \
                     \"object\" (values that are not objects are refused)",
                    self.name()
                ),
            );
        }
        if strict.closed {
            let current = out.get("additionalProperties").cloned();
            if current != Some(Value::Bool(false)) {
                if declared.is_empty() && !is_root {
                    return refuse(
                        at,
                        format!(
                            "this object declares no properties (it takes any keys); {} closes \
                             every object, so it could only ever be {{}}",
                            self.name()
                        ),
                    );
                }
                out.insert("additionalProperties".into(), Value::Bool(false));
                let was = match &current {
                    None => "absent".to_string(),
                    Some(v) => v.to_string(),
                };
                self.report(
                    at,
                    "additionalProperties",
                    LossAction::Rewritten,
                    Accepts::Less,
                    Topic::Strict,
                    format!(
                        "{} closes every object: additionalProperties (was {was}) is false, so \
                         properties it does not declare are refused",
                        self.name()
                    ),
                );
            }
        }
        if strict.all_required {
            if !undeclared.is_empty() {
                return refuse(
                    &push_segment(at, "required"),
                    format!(
                        "required names {} are not declared in properties; {} closes the object, \
                         so no call could pass",
                        quoted(&undeclared),
                        self.name()
                    ),
                );
            }
            let optional: Vec<String> = declared
                .iter()
                .filter(|n| !required_names.contains(n.as_str()))
                .cloned()
                .collect();
            if !optional.is_empty() {
                let declared_in_source = source.get("properties").and_then(Value::as_object);
                let takes_null: Vec<&String> = optional
                    .iter()
                    .filter(|name| {
                        declared_in_source
                            .and_then(|p| p.get(name.as_str()))
                            .is_some_and(|schema| self.takes_null(schema, 0))
                    })
                    .collect();
                if !takes_null.is_empty() {
                    let names = takes_null.iter().map(|n| Value::String(n.to_string()));
                    out.insert(TAKES_NULL_MARK.into(), Value::Array(names.collect()));
                    self.report(
                        at,
                        "required",
                        LossAction::Rewritten,
                        Accepts::Reshaped,
                        Topic::Strict,
                        format!(
                            "{} requires every property: optional {} already accept null, which                              the model may mean, so restore_arguments keeps a null sent there                              where the original takes it; leaving them out cannot be said",
                            self.name(),
                            quoted(&takes_null)
                        ),
                    );
                }
                if let Some(Value::Object(properties)) = out.get_mut("properties") {
                    for name in &optional {
                        if let Some(schema) = properties.get_mut(name) {
                            *schema = nullable(std::mem::take(schema));
                        }
                    }
                }
                out.insert(
                    "required".into(),
                    Value::Array(declared.iter().cloned().map(Value::String).collect()),
                );
                out.insert(
                    OPTIONAL_MARK.into(),
                    Value::Array(optional.iter().cloned().map(Value::String).collect()),
                );
                self.report(
                    at,
                    "required",
                    LossAction::Rewritten,
                    Accepts::Reshaped,
                    Topic::Strict,
                    format!(
                        "{} requires every property: optional {} now required and accept null, \
                         which stands for \"not given\" (restore_arguments removes it)",
                        self.name(),
                        quoted(&optional.iter().collect::<Vec<_>>())
                    ),
                );
            }
        }
        Ok(())
    }

    /// Whether an original schema takes `null`, as far as its own keywords tell (`type`,
    /// `const`, `enum`, `$ref`, `anyOf`/`oneOf`/`allOf`); what it takes in context is for the
    /// original's validator to say when a call is restored.
    pub(super) fn takes_null(&self, schema: &Value, hops: usize) -> bool {
        let map = match schema {
            Value::Bool(b) => return *b,
            Value::Object(map) => map,
            _ => return false,
        };
        if hops > MAX_NULL_HOPS {
            return false;
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            // Draft-07 ignores the keywords beside a `$ref`: the target alone decides.
            if self.dialect == Dialect::Draft7 {
                return self
                    .target(reference, "")
                    .is_ok_and(|(target, _)| self.takes_null(target, hops + 1));
            }
        }
        if admits_type(map, "null") == Some(false) {
            return false;
        }
        if map.get("const").is_some_and(|c| !c.is_null()) {
            return false;
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            if !values.iter().any(Value::is_null) {
                return false;
            }
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            match self.target(reference, "") {
                Ok((target, _)) if self.takes_null(target, hops + 1) => {}
                _ => return false,
            }
        }
        let branches = |key: &str| map.get(key).and_then(Value::as_array);
        for key in ["anyOf", "oneOf"] {
            if let Some(list) = branches(key) {
                if !list.iter().any(|b| self.takes_null(b, hops + 1)) {
                    return false;
                }
            }
        }
        if let Some(list) = branches("allOf") {
            if !list.iter().all(|b| self.takes_null(b, hops + 1)) {
                return false;
            }
        }
        true
    }
}
