//! `allOf`: its branches merged into one schema, member by member, where that keeps its meaning.

use super::*;

impl<'a> Adaptation<'a> {
    /// An `allOf` written as one schema (for a profile that has no `allOf`).
    ///
    /// The parent's `additionalProperties` sees only the parent's own `properties` and
    /// `patternProperties`, never a branch's: a property only a branch declares is refused by a
    /// parent closed with `false` (it is left out of the merged schema, where it would be
    /// offered) and must fit a parent's `additionalProperties` schema as well as the branch's
    /// (both are kept, under an `allOf` of the property). Whatever the merged schema accepts
    /// that the original did not is reported as widened.
    pub(super) fn merge_all_of(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
    ) -> Step<Map<String, Value>> {
        let mut merged = map.clone();
        let branches = match merged.shift_remove("allOf") {
            Some(Value::Array(b)) => b,
            _ => return Ok(merged),
        };
        let mut widenings: Vec<&'static str> = Vec::new();
        let mut evaluates_all = false;
        let mut widen = |why: &'static str| {
            if !widenings.contains(&why) {
                widenings.push(why);
            }
        };
        for (i, branch) in branches.iter().enumerate() {
            let branch_at = format!("{at}/allOf/{i}");
            let mut branch = match branch {
                Value::Bool(true) => continue,
                Value::Object(m) => self.ref_siblings_read(m, &branch_at).into_owned(),
                _ => {
                    return refuse(
                        &branch_at,
                        "an allOf branch is `false`: the schema accepts nothing",
                    )
                }
            };
            if let Some(reference) = branch
                .get("$ref")
                .and_then(Value::as_str)
                .map(str::to_string)
            {
                let (target, target_at) = self.target(&reference, &branch_at)?;
                if self.inlining.contains(&target_at) {
                    return refuse(
                        &branch_at,
                        format!("the allOf branch refers back to {reference}: a cycle"),
                    );
                }
                let target = target.as_object().cloned().unwrap_or_default();
                branch.shift_remove("$ref");
                branch = self.combine(target, branch, &branch_at, &target_at)?;
            }
            if branch.contains_key("allOf") {
                branch = self.merge_all_of(&branch, &branch_at)?;
            }
            for (k, mut v) in branch {
                if k == "additionalProperties" || k == "unevaluatedProperties" {
                    // Unless it is `false`, it marks every property it sees as evaluated, so
                    // the parent's `unevaluatedProperties` refuses none (dropped below).
                    evaluates_all |= v != Value::Bool(false);
                    if says_nothing(&v) {
                        continue;
                    }
                    // A branch closed to what it declares does not close the merged object.
                    widen(
                        "a branch closed to the properties it declares no longer refuses the \
                         others' properties",
                    );
                    continue;
                }
                if k == "properties" {
                    if let Value::Object(properties) = v {
                        v = Value::Object(
                            self.branch_properties(map, properties, &branch_at, &mut widen),
                        );
                    }
                } else if k == "patternProperties" && closes_undeclared(map) {
                    let parent = map.get("patternProperties").and_then(Value::as_object);
                    let added = v.as_object().is_some_and(|patterns| {
                        patterns
                            .keys()
                            .any(|p| !parent.is_some_and(|q| q.contains_key(p)))
                    });
                    if added {
                        widen(
                            "the parent's additionalProperties no longer applies to names that \
                             only a branch's patternProperties match",
                        );
                    }
                }
                self.merge_into(&mut merged, k, v, &branch_at, |k, name| {
                    format!(
                        "the allOf branches constrain {k} differently; {name} has no allOf and \
                         they cannot be merged into one schema"
                    )
                })?;
            }
        }
        if evaluates_all && merged.shift_remove("unevaluatedProperties").is_some() {
            self.report(
                at,
                "unevaluatedProperties",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                "an allOf branch's additionalProperties (or unevaluatedProperties) marks every \
                 property as evaluated, so unevaluatedProperties refuses none; merged, it is \
                 left out"
                    .into(),
            );
        }
        let widened = !widenings.is_empty();
        let what = if widened {
            format!(
                "merged into one schema that accepts more: {}",
                widenings.join("; ")
            )
        } else {
            "merged into one schema with the same meaning".to_string()
        };
        let (action, accepts, topic) = if widened {
            (LossAction::Widened, Accepts::More, Topic::Widening)
        } else {
            (LossAction::Rewritten, Accepts::Same, Topic::Rewrite)
        };
        self.report(
            at,
            "allOf",
            action,
            accepts,
            topic,
            format!(
                "{} {}: its branches were {what}",
                self.name(),
                if at.is_empty() {
                    "accepts no allOf at the root"
                } else {
                    "has no allOf"
                }
            ),
        );
        Ok(merged)
    }

    /// The `properties` of an `allOf` branch as the merged schema takes them: a property the
    /// parent's `additionalProperties: false` refuses is left out, one its
    /// `additionalProperties` schema applies to keeps both schemas.
    pub(super) fn branch_properties(
        &mut self,
        parent: &Map<String, Value>,
        properties: Map<String, Value>,
        branch_at: &str,
        widen: &mut impl FnMut(&'static str),
    ) -> Map<String, Value> {
        let mut kept = Map::new();
        for (name, schema) in properties {
            let here = push_segment(&push_segment(branch_at, "properties"), &name);
            match parent_on_branch_property(parent, &name) {
                ParentSays::Nothing => {
                    kept.insert(name, schema);
                }
                ParentSays::Refuses => {
                    self.report(
                        &here,
                        "properties",
                        LossAction::Dropped,
                        Accepts::Same,
                        Topic::Rewrite,
                        format!(
                            "property '{name}' is declared only in an allOf branch, and the \
                             parent's additionalProperties: false refuses it (it sees only the \
                             parent's own properties); merged, it is left out, as the original \
                             never accepts it"
                        ),
                    );
                }
                ParentSays::AlsoFits(additional) => {
                    self.report(
                        &here,
                        "additionalProperties",
                        LossAction::Rewritten,
                        Accepts::Same,
                        Topic::Rewrite,
                        format!(
                            "property '{name}' is declared only in an allOf branch, so the \
                             parent's additionalProperties applies to it too; merged, the \
                             property must fit both schemas"
                        ),
                    );
                    kept.insert(name, serde_json::json!({ "allOf": [additional, schema] }));
                }
                ParentSays::Unknown => {
                    widen(
                        "a property only a branch declares is no longer checked against the \
                         parent's additionalProperties (whether a parent patternProperties \
                         pattern matches its name cannot be told)",
                    );
                    kept.insert(name, schema);
                }
            }
        }
        kept
    }
}

/// Add `key: value` to `out`, as when both schemas apply to the same value. `Err(key)` when they
/// constrain it differently and no single value says both; `Ok(Some(value))` for an annotation
/// given differently whose second value could not be kept (two descriptions are joined).
pub(super) fn merge_member(
    out: &mut Map<String, Value>,
    key: String,
    value: Value,
) -> Result<Option<Value>, String> {
    let Some(existing) = out.get_mut(&key) else {
        out.insert(key, value);
        return Ok(None);
    };
    if *existing == value {
        return Ok(None);
    }
    match key.as_str() {
        "description" => match (&*existing, &value) {
            (Value::String(first), Value::String(second)) => {
                let joined = describe::append(Some(first), std::slice::from_ref(second));
                *existing = Value::String(joined);
                Ok(None)
            }
            _ => Ok(Some(value)),
        },
        // Other annotations: the first one stays.
        k if describes_only(k) && k != "format" => Ok(Some(value)),
        "properties" | "$defs" | "definitions" | "patternProperties" | "dependentSchemas" => {
            let (Value::Object(mine), Value::Object(theirs)) = (existing, value) else {
                return Err(key);
            };
            for (name, schema) in theirs {
                match mine.get(&name) {
                    None => {
                        mine.insert(name, schema);
                    }
                    Some(s) if *s == schema => {}
                    Some(_) => return Err(format!("{key}/{name}")),
                }
            }
            Ok(None)
        }
        "required" => {
            let (Value::Array(mine), Value::Array(theirs)) = (existing, value) else {
                return Err(key);
            };
            for name in theirs {
                if !mine.contains(&name) {
                    mine.push(name);
                }
            }
            Ok(None)
        }
        "minimum" | "minLength" | "minItems" | "minProperties" | "exclusiveMinimum" => {
            tighter(existing, &value, true).map(|()| None).ok_or(key)
        }
        "maximum" | "maxLength" | "maxItems" | "maxProperties" | "exclusiveMaximum" => {
            tighter(existing, &value, false).map(|()| None).ok_or(key)
        }
        _ => Err(key),
    }
}

/// An `additionalProperties` (or `unevaluatedProperties`) that constrains nothing.
pub(super) fn says_nothing(schema: &Value) -> bool {
    schema == &Value::Bool(true) || schema.as_object().is_some_and(Map::is_empty)
}

/// Whether a schema's `additionalProperties` constrains the properties it does not declare.
pub(super) fn closes_undeclared(schema: &Map<String, Value>) -> bool {
    schema
        .get("additionalProperties")
        .is_some_and(|a| !says_nothing(a))
}

/// What a schema's `additionalProperties` says about a property that only one of its `allOf`
/// branches declares.
pub(super) enum ParentSays {
    /// Nothing: the parent declares the name, a pattern of its matches it, or it is open.
    Nothing,
    /// `additionalProperties: false` refuses it.
    Refuses,
    /// The property must fit this `additionalProperties` schema too.
    AlsoFits(Value),
    /// Whether a `patternProperties` pattern matches the name cannot be told (the pattern does
    /// not compile).
    Unknown,
}

pub(super) fn parent_on_branch_property(parent: &Map<String, Value>, name: &str) -> ParentSays {
    let Some(additional) = parent
        .get("additionalProperties")
        .filter(|a| !says_nothing(a))
    else {
        return ParentSays::Nothing;
    };
    let declared = parent
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(name));
    if declared {
        return ParentSays::Nothing;
    }
    if let Some(Value::Object(patterns)) = parent.get("patternProperties") {
        for pattern in patterns.keys() {
            match compile_pattern(pattern) {
                Some(p) if p.is_valid(&Value::String(name.to_string())) => {
                    return ParentSays::Nothing
                }
                Some(_) => {}
                None => return ParentSays::Unknown,
            }
        }
    }
    match additional {
        Value::Bool(false) => ParentSays::Refuses,
        other => ParentSays::AlsoFits(other.clone()),
    }
}

/// Keep the tighter of two numeric bounds in `existing`.
pub(super) fn tighter(existing: &mut Value, other: &Value, lower: bool) -> Option<()> {
    let (a, b) = (existing.as_f64()?, other.as_f64()?);
    if (lower && b > a) || (!lower && b < a) {
        *existing = other.clone();
    }
    Some(())
}
