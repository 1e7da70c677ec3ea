//! Arrays: tuples (`prefixItems`, draft-07 `items` lists) and the rules a profile sets on
//! `items`.

use super::*;

impl<'a> Adaptation<'a> {
    /// `prefixItems` (already adapted) with the `items` after them: kept, or, where the profile
    /// has no tuples, one item schema for every position.
    pub(super) fn tuple(
        &mut self,
        positions: Value,
        source: &Map<String, Value>,
        at: &str,
        level: usize,
        built: &mut AdaptedMembers,
    ) -> Step<()> {
        // What may follow the positions: 2020-12 `items` beside `prefixItems`, or draft-07
        // `additionalItems` beside a list of `items`.
        let rest_key = if source.get("prefixItems").is_some() {
            "items"
        } else {
            "additionalItems"
        };
        let rest = match source.get(rest_key) {
            // `true` and `false` are read below, whatever the profile writes.
            Some(Value::Bool(b)) => Some(Value::Bool(*b)),
            Some(r) => Some(self.subschema(r, &push_segment(at, rest_key), level + 1)?),
            None => None,
        };
        if self.profile.supports("prefixItems") {
            built.out.insert("prefixItems".into(), positions);
            if let Some(rest) = rest {
                built.out.insert("items".into(), rest);
            }
            return Ok(());
        }
        let Value::Array(list) = positions else {
            return Ok(());
        };
        let count = list.len();
        let mut kinds: Vec<Value> = Vec::new();
        for schema in list.iter().chain(rest.iter()) {
            if schema != &Value::Bool(false) && !kinds.contains(schema) {
                kinds.push(schema.clone());
            }
        }
        let items = match kinds.len() {
            0 => None,
            1 => kinds.pop(),
            _ => Some(serde_json::json!({ "anyOf": kinds })),
        };
        if let Some(items) = items {
            built.out.insert("items".into(), items);
        }
        if rest == Some(Value::Bool(false)) {
            let max = source
                .get("maxItems")
                .and_then(Value::as_u64)
                .map_or(count as u64, |m| m.min(count as u64));
            built.out.insert("maxItems".into(), Value::from(max));
        }
        let shown: Vec<String> = list
            .iter()
            .map(|position| {
                let mut position = position.clone();
                strip_marks(&mut position);
                position.to_string()
            })
            .collect();
        built
            .sentences
            .push(format!("Items by position: {}.", shown.join(", ")));
        self.report(
            at,
            "prefixItems",
            LossAction::Widened,
            Accepts::More,
            Topic::Widening,
            format!(
                "{} has no tuples: the {count} positions became one item schema that accepts any \
                 of them (the positions are listed in the description)",
                self.name()
            ),
        );
        Ok(())
    }

    /// Arrays: `items` where the provider requires it.
    pub(super) fn array_rules(
        &mut self,
        source: &Map<String, Value>,
        out: &mut Map<String, Value>,
        at: &str,
    ) -> Step<()> {
        if !admits(out, "array") && !admits(source, "array") {
            return Ok(());
        }
        let has_items = out.contains_key("items") || out.contains_key("prefixItems");
        if let Some(strict) = self.profile.strict.map(|s| s.rule) {
            if strict.typed_items && !out.get("items").is_some_and(is_typed) {
                return refuse(
                    at,
                    format!(
                        "this array does not say what its elements are; {} needs a typed items \
                         schema, and only the tool's author knows the type",
                        self.name()
                    ),
                );
            }
            return Ok(());
        }
        if self.profile.requirements.rule.array_items && !has_items {
            out.insert("items".into(), Value::Object(Map::new()));
            self.report(
                at,
                "items",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Missing,
                format!(
                    "{} rejects an array schema without items: \"items\": {{}} is added (any \
                     element, as before)",
                    self.name()
                ),
            );
        }
        Ok(())
    }
}
