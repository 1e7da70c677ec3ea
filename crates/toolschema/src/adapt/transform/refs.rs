//! References: where a `$ref` leads, whether it stays a reference or is inlined, and what
//! the keywords beside it mean in the schema's dialect.

use super::*;

impl<'a> Adaptation<'a> {
    /// Where a local reference points: the value and its pointer. Refused for references to
    /// other documents and for references that point at nothing.
    pub(super) fn target(&self, reference: &str, at: &str) -> Step<(&'a Value, String)> {
        match self.references.locate(reference) {
            Ok(Target { pointer, value }) if value.is_object() || value.is_boolean() => {
                Ok((value, pointer))
            }
            Ok(_) | Err(Unresolved::NoValue) => {
                refuse(at, format!("$ref {reference} points at no schema"))
            }
            Err(Unresolved::NoAnchor) => refuse(
                at,
                format!("$ref {reference} names no $anchor in the schema"),
            ),
            Err(Unresolved::Malformed) => {
                refuse(at, format!("$ref {reference} is not a URI reference"))
            }
            Err(Unresolved::Elsewhere) => refuse(
                at,
                format!(
                    "$ref {reference} points outside the schema; adapt follows only references \
                     inside it"
                ),
            ),
        }
    }

    /// Whether a `$ref` stays a reference in the adapted schema.
    pub(super) fn keeps_reference(&self, reference: &str) -> bool {
        match self.profile.references.rule {
            References::Any => true,
            References::None => false,
            References::DefinitionsOnly => {
                let reference = self.translated_ref(reference);
                reference == "#"
                    || reference
                        .strip_prefix("#/$defs/")
                        .is_some_and(|name| !name.contains('/'))
            }
        }
    }

    /// A reference as the adapted schema writes it (`#/definitions/x` -> `#/$defs/x`).
    pub(super) fn translated_ref(&self, reference: &str) -> String {
        if self.to_2020 {
            if let Some(rest) = reference.strip_prefix("#/definitions/") {
                return format!("#/$defs/{rest}");
            }
        }
        reference.to_string()
    }

    /// `map` as its dialect reads it: in draft-07 the keywords beside a `$ref` are ignored, so
    /// they are left out (reported) before the reference is written out or kept in a schema
    /// read as 2020-12, where they would apply. Annotations a model reads, `$schema`, and the
    /// definitions the references lead to stay.
    pub(super) fn ref_siblings_read<'m>(
        &mut self,
        map: &'m Map<String, Value>,
        at: &str,
    ) -> std::borrow::Cow<'m, Map<String, Value>> {
        if !self.dialect.ref_ignores_siblings() || !map.contains_key("$ref") {
            return std::borrow::Cow::Borrowed(map);
        }
        let stays = |k: &str| {
            matches!(k, "$ref" | "$schema" | "definitions" | "$defs" | "$comment")
                || (vocabulary::is_annotation(k) && !k.starts_with('$'))
        };
        let ignored: Vec<&String> = map.keys().filter(|k| !stays(k)).collect();
        if ignored.is_empty() {
            return std::borrow::Cow::Borrowed(map);
        }
        self.report(
            at,
            "$ref",
            LossAction::Dropped,
            Accepts::Same,
            Topic::Rewrite,
            format!(
                "draft-07 ignores the keywords beside a $ref: {} constrained nothing and is \
                 left out (beside the $ref in what {} reads, it would apply)",
                quoted(&ignored),
                self.name()
            ),
        );
        let read = map
            .iter()
            .filter(|(k, _)| stays(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        std::borrow::Cow::Owned(read)
    }

    /// `map` (which has a `$ref` the profile cannot keep) with its target written in place.
    pub(super) fn inline(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        level: usize,
    ) -> Step<Value> {
        let reference = map
            .get("$ref")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let (target, target_at) = self.target(&reference, at)?;
        if let Some(start) = self.inlining.iter().position(|t| *t == target_at) {
            let mut chain: Vec<String> = self.inlining[start..]
                .iter()
                .map(|p| format!("#{p}"))
                .collect();
            chain.push(format!("#{target_at}"));
            return refuse(
                at,
                format!(
                    "the $ref cycle {} cannot be written out: {} takes no recursive schemas here",
                    chain.join(" -> "),
                    self.name()
                ),
            );
        }
        let mut siblings = map.clone();
        siblings.shift_remove("$ref");
        self.inlining.push(target_at.clone());
        let result = if siblings.is_empty() {
            self.node(target, &target_at, level, false)
        } else {
            let target_map = match target {
                Value::Object(m) => m.clone(),
                Value::Bool(true) => Map::new(),
                _ => {
                    self.inlining.pop();
                    return refuse(at, format!("$ref {reference} points at `false`"));
                }
            };
            let combined = self.combine(target_map, siblings, at, &target_at);
            match combined {
                Ok(c) => self.node(&Value::Object(c), at, level, false),
                Err(e) => Err(e),
            }
        };
        self.inlining.pop();
        let value = result?;
        self.report(
            at,
            "$ref",
            LossAction::Rewritten,
            Accepts::Same,
            Topic::Rewrite,
            format!(
                "$ref {reference} is written out in place: {} takes no $ref {}",
                self.name(),
                match self.profile.references.rule {
                    References::None => "at all",
                    _ => "except to #/$defs/NAME, with nothing beside it",
                }
            ),
        );
        Ok(value)
    }

    /// One schema that means what `first` and `second` mean together (both apply, as a `$ref`
    /// and its siblings do). Refused when they constrain the same keyword differently.
    pub(super) fn combine(
        &mut self,
        first: Map<String, Value>,
        second: Map<String, Value>,
        at: &str,
        first_at: &str,
    ) -> Step<Map<String, Value>> {
        let mut out = first;
        for (k, v) in second {
            self.merge_into(&mut out, k, v, at, |k, name| {
                format!(
                    "{k} is given both here and in #{first_at} with different values; they \
                     cannot be merged into one schema for {name}"
                )
            })?;
        }
        Ok(out)
    }

    /// [`merge_member`], with an annotation that could not be kept reported, and a conflict
    /// refused with `conflict(keyword, profile)`.
    pub(super) fn merge_into(
        &mut self,
        out: &mut Map<String, Value>,
        key: String,
        value: Value,
        at: &str,
        conflict: impl FnOnce(&str, &str) -> String,
    ) -> Step<()> {
        let keyword = key.clone();
        match merge_member(out, key, value) {
            Ok(None) => Ok(()),
            Ok(Some(left_out)) => {
                let kept = out.get(&keyword).cloned().unwrap_or(Value::Null);
                self.report(
                    at,
                    &keyword,
                    LossAction::Dropped,
                    Accepts::Same,
                    Topic::Rewrite,
                    format!(
                        "{keyword} is given twice with different values ({kept} and {left_out}) \
                         in schemas merged into one, which holds one {keyword}: {left_out} is \
                         left out"
                    ),
                );
                Ok(())
            }
            Err(k) => Err(Refusal {
                pointer: at.to_string(),
                message: conflict(&k, self.name()),
            }),
        }
    }

    /// A `$ref` with other keywords beside it, for a profile that allows only `$`-keywords
    /// there: the reference moves into an `anyOf` of one branch (same meaning).
    pub(super) fn wrap_ref_siblings(
        &mut self,
        out: &mut Map<String, Value>,
        at: &str,
    ) -> Option<Value> {
        if self.profile.references.rule != References::DefinitionsOnly {
            return None;
        }
        out.get("$ref")?;
        let besides: Vec<&String> = out
            .keys()
            .filter(|k| !k.starts_with('$') && !k.starts_with('\u{0}'))
            .collect();
        if besides.is_empty() {
            return None;
        }
        let reference = out.shift_remove("$ref")?;
        let mut wrapped = Map::new();
        wrapped.insert(
            "anyOf".into(),
            Value::Array(vec![serde_json::json!({ "$ref": reference })]),
        );
        for (k, v) in std::mem::take(out) {
            wrapped.insert(k, v);
        }
        self.report(
            at,
            "$ref",
            LossAction::Rewritten,
            Accepts::Same,
            Topic::Rewrite,
            format!(
                "{} takes nothing beside a $ref: the reference is written as an anyOf of one \
                 branch (same meaning)",
                self.name()
            ),
        );
        Some(Value::Object(wrapped))
    }
}
