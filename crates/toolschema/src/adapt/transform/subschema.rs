//! One subschema: a boolean schema or an object, walked keyword by keyword, each keyword
//! handed to the family that adapts it.

use super::*;

impl<'a> Adaptation<'a> {
    pub(super) fn node(
        &mut self,
        value: &Value,
        at: &str,
        level: usize,
        is_root: bool,
    ) -> Step<Value> {
        self.enter(at, level)?;
        match value {
            Value::Bool(b) => self.boolean(*b, at),
            Value::Object(map) => self.object(map, at, level, is_root),
            _ => refuse(at, "not a schema (an object or a boolean)"),
        }
    }

    /// A subschema under a keyword (`items`, `additionalProperties`, `not`, ...), where every
    /// JSON Schema profile takes `true` and `false` as they are.
    pub(super) fn subschema(&mut self, value: &Value, at: &str, level: usize) -> Step<Value> {
        match value {
            Value::Bool(b) if !self.profile.is_openapi() => Ok(Value::Bool(*b)),
            _ => self.node(value, at, level, false),
        }
    }

    pub(super) fn keeps_booleans(&self) -> bool {
        matches!(
            self.profile.vocabulary,
            crate::adapt::profile::Vocabulary::Any
        )
    }

    pub(super) fn boolean(&mut self, b: bool, at: &str) -> Step<Value> {
        if self.keeps_booleans() {
            return Ok(Value::Bool(b));
        }
        if !b {
            return refuse(
                at,
                format!(
                    "`false` (a schema nothing matches) has no form in {}",
                    self.name()
                ),
            );
        }
        if self.profile.strict.is_some() {
            return refuse(
                at,
                format!(
                    "`true` (any value) has no form in {}: strict mode needs a type here",
                    self.name()
                ),
            );
        }
        Ok(Value::Object(Map::new()))
    }

    pub(super) fn object(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        level: usize,
        is_root: bool,
    ) -> Step<Value> {
        let map = &*self.ref_siblings_read(map, at);
        if let Some(reference) = map.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return refuse(at, "$ref is not a string");
            };
            if !self.keeps_reference(reference) {
                return self.inline(map, at, level);
            }
            // The reference stays: its target must be there, whatever the profile (a provider
            // that takes any `$ref` still cannot follow one to nothing or to another document).
            self.target(reference, at)?;
        }
        let mut source = std::borrow::Cow::Borrowed(map);
        if source.contains_key("allOf") && !self.profile.supports("allOf") {
            source = std::borrow::Cow::Owned(self.merge_all_of(&source, at)?);
        }
        let mut built = AdaptedMembers {
            out: Map::new(),
            sentences: Vec::new(),
            description: None,
        };
        let mut ready: Map<String, Value> = Map::new();
        if let Some(Value::Array(types)) = source.get("type") {
            if !self.profile.type_lists.rule {
                let types = types.clone();
                source = std::borrow::Cow::Owned(
                    self.split_type_list(&source, &types, at, level, &mut ready)?,
                );
            }
        }
        if source.contains_key("oneOf")
            && source.contains_key("anyOf")
            && self.profile.one_of.rule != OneOf::Supported
        {
            return refuse(
                at,
                format!(
                    "the schema has both anyOf and oneOf; {} reads only anyOf and the two cannot \
                     be written as one",
                    self.name()
                ),
            );
        }
        for (key, value) in source.iter() {
            let key = key.as_str();
            self.member(key, value, &source, at, level, is_root, &mut built)?;
        }
        let AdaptedMembers {
            mut out,
            sentences,
            description,
        } = built;
        for (k, v) in ready {
            out.insert(k, v);
        }
        if let Some(text) = self.finish_description(description, &sentences) {
            out.insert("description".into(), text);
        }
        self.object_rules(&source, &mut out, at, is_root)?;
        self.array_rules(&source, &mut out, at)?;
        if let Some(wrapped) = self.wrap_ref_siblings(&mut out, at) {
            return Ok(wrapped);
        }
        if self.profile.strict.is_some() && !is_typed_map(&out) {
            return refuse(
                at,
                format!(
                    "this schema does not say what its values are; {} needs a type (or enum, \
                     anyOf, $ref) on every schema",
                    self.name()
                ),
            );
        }
        Ok(Value::Object(out))
    }

    pub(super) fn finish_description(
        &self,
        description: Option<Value>,
        sentences: &[String],
    ) -> Option<Value> {
        if sentences.is_empty() {
            return description;
        }
        let text = describe::append(description.as_ref().and_then(Value::as_str), sentences);
        Some(Value::String(text))
    }

    /// One member of a schema object.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn member(
        &mut self,
        key: &str,
        value: &Value,
        source: &Map<String, Value>,
        at: &str,
        level: usize,
        is_root: bool,
        built: &mut AdaptedMembers,
    ) -> Step<()> {
        let child = |name: &str| push_segment(at, name);
        match key {
            "description" => {
                built.description = Some(value.clone());
                // Keep its place: filled in at the end (moved constraints are appended).
                built.out.insert(key.into(), value.clone());
            }
            "$ref" => {
                built.out.insert(
                    key.into(),
                    Value::String(self.translated_ref(value.as_str().unwrap_or_default())),
                );
            }
            "$schema" => {
                if self.profile.dialect.rule == OutputDialect::AsWritten {
                    built.out.insert(key.into(), value.clone());
                } else {
                    self.report(
                        at,
                        key,
                        LossAction::Dropped,
                        Accepts::Same,
                        Topic::Rewrite,
                        format!(
                            "$schema {value} is left out: {} reads the schema as {}",
                            self.name(),
                            if self.profile.is_openapi() {
                                "an OpenAPI 3.0 schema object"
                            } else {
                                "JSON Schema 2020-12 (draft-07 keywords are translated)"
                            }
                        ),
                    );
                }
            }
            "$defs" | "definitions" => self.definitions(key, value, at, level, is_root, built)?,
            "properties" => {
                let Value::Object(properties) = value else {
                    return refuse(&child(key), "properties is not an object");
                };
                let mut out = Map::new();
                for (name, schema) in properties {
                    let here = push_segment(&child(key), name);
                    if schema == &Value::Bool(false) && !self.keeps_booleans() {
                        let accepts = if is_closed(source) {
                            Accepts::Same
                        } else {
                            Accepts::More
                        };
                        self.report(
                            &here,
                            "properties",
                            LossAction::Dropped,
                            accepts,
                            Topic::Unsupported,
                            format!(
                                "property '{name}' is `false` (never accepted), which {} cannot \
                                 write; it is left out of properties",
                                self.name()
                            ),
                        );
                        continue;
                    }
                    out.insert(name.clone(), self.node(schema, &here, level + 1, false)?);
                }
                built.out.insert(key.into(), Value::Object(out));
            }
            "required" => {
                built.out.insert(key.into(), value.clone());
            }
            "type" => {
                built.out.insert(key.into(), value.clone());
            }
            "items" if value.is_array() => {
                // draft-07 tuple form.
                let adapted = self.branches(value, &child(key), level)?;
                if self.to_2020 {
                    self.report(
                        at,
                        key,
                        LossAction::Rewritten,
                        Accepts::Same,
                        Topic::Rewrite,
                        "the draft-07 list form of items is written prefixItems, as JSON Schema \
                         2020-12 names it"
                            .into(),
                    );
                    if source.contains_key("additionalItems") {
                        self.report(
                            at,
                            "additionalItems",
                            LossAction::Rewritten,
                            Accepts::Same,
                            Topic::Rewrite,
                            "draft-07 additionalItems (after a list of items) is written items, \
                             as JSON Schema 2020-12 names it"
                                .into(),
                        );
                    }
                    self.tuple(adapted, source, at, level, built)?;
                } else {
                    built.out.insert(key.into(), adapted);
                }
            }
            "additionalItems" => {
                let tuple = source.get("items").is_some_and(Value::is_array);
                if !self.to_2020 {
                    let adapted = self.subschema(value, &child(key), level + 1)?;
                    built.out.insert(key.into(), adapted);
                } else if !tuple {
                    self.report(
                        at,
                        key,
                        LossAction::Dropped,
                        Accepts::Same,
                        Topic::Rewrite,
                        "additionalItems without a list of items has no effect in draft-07; it is \
                         left out"
                            .into(),
                    );
                }
                // With a tuple, `tuple` writes it as the 2020-12 `items`.
            }
            "prefixItems" => {
                let adapted = self.branches(value, &child(key), level)?;
                self.tuple(adapted, source, at, level, built)?;
            }
            "items" => {
                if source.get("prefixItems").is_some() {
                    // Written by `tuple`, with the positions.
                    return Ok(());
                }
                let adapted = self.subschema(value, &child(key), level + 1)?;
                built.out.insert(key.into(), adapted);
            }
            "oneOf" => {
                let branches = self.branches(value, &child(key), level)?;
                match self.profile.one_of.rule {
                    OneOf::Supported => {
                        built.out.insert(key.into(), branches);
                    }
                    rule => {
                        let disjoint = distinct_types(value);
                        let (action, accepts) = if disjoint {
                            (LossAction::Rewritten, Accepts::Same)
                        } else {
                            (LossAction::Widened, Accepts::More)
                        };
                        let why = if rule == OneOf::ReadAsAnyOf {
                            "reads oneOf as anyOf without a word"
                        } else {
                            "has no oneOf"
                        };
                        let effect = if disjoint {
                            "its branches take values of different types, so the meaning is the same"
                        } else {
                            "a value matching several branches is now accepted too"
                        };
                        self.report(
                            at,
                            key,
                            action,
                            accepts,
                            if disjoint {
                                Topic::Rewrite
                            } else {
                                Topic::Widening
                            },
                            format!("{} {why}: written anyOf; {effect}", self.name()),
                        );
                        built.out.insert("anyOf".into(), branches);
                    }
                }
            }
            "anyOf" | "allOf" if self.profile.supports(key) => {
                let branches = self.branches(value, &child(key), level)?;
                built.out.insert(key.into(), branches);
            }
            "const" if !self.profile.supports(key) => self.constant(value, source, at, built),
            "enum" => self.enumeration(value, source, at, built),
            "format" => {
                let name = value.as_str().unwrap_or_default();
                if self.profile.supports(key) && self.profile.accepts_format(name) {
                    built.out.insert(key.into(), value.clone());
                } else {
                    let source_note = self
                        .profile
                        .formats
                        .map(|f| f.rule.join(", "))
                        .unwrap_or_default();
                    self.move_to_description(
                        key,
                        value,
                        at,
                        built,
                        Accepts::Same,
                        if source_note.is_empty() {
                            None
                        } else {
                            Some(format!("the formats it takes are {source_note}"))
                        },
                    );
                }
            }
            "additionalProperties" | "unevaluatedProperties"
                if self.profile.strict.is_some() && key == "additionalProperties" =>
            {
                // Strict mode closes every object: decided in `object_rules`.
                built.out.insert(key.into(), value.clone());
            }
            "dependencies" if self.to_2020 => self.dependencies(value, at, level, built)?,
            _ if self.profile.supports(key) => {
                let adapted = self.keyword_value(key, value, at, level)?;
                built.out.insert(key.into(), adapted);
            }
            _ => self.unsupported(key, value, source, at, built),
        }
        Ok(())
    }

    /// A kept keyword's value, with its subschemas adapted.
    pub(super) fn keyword_value(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
        level: usize,
    ) -> Step<Value> {
        let here = push_segment(at, key);
        Ok(match key {
            "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "contentSchema"
                if value.is_object() || value.is_boolean() =>
            {
                self.subschema(value, &here, level + 1)?
            }
            "patternProperties" | "dependentSchemas" => match value {
                Value::Object(map) => {
                    let mut out = Map::new();
                    for (name, schema) in map {
                        let there = push_segment(&here, name);
                        out.insert(name.clone(), self.node(schema, &there, level + 1, false)?);
                    }
                    Value::Object(out)
                }
                other => other.clone(),
            },
            _ => value.clone(),
        })
    }

    pub(super) fn branches(&mut self, value: &Value, here: &str, level: usize) -> Step<Value> {
        let Value::Array(items) = value else {
            return refuse(here, "not a list of schemas");
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.push(self.node(item, &format!("{here}/{i}"), level + 1, false)?);
        }
        Ok(Value::Array(out))
    }

    /// `$defs` (or draft-07 `definitions`): kept, each adapted, where the profile follows
    /// references to them; written out at every reference otherwise.
    pub(super) fn definitions(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
        level: usize,
        is_root: bool,
        built: &mut AdaptedMembers,
    ) -> Step<()> {
        let Value::Object(defs) = value else {
            return refuse(&push_segment(at, key), format!("{key} is not an object"));
        };
        let keeps = match self.profile.references.rule {
            References::Any => true,
            References::DefinitionsOnly => is_root,
            References::None => false,
        };
        if !keeps {
            self.report(
                at,
                key,
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                format!(
                    "{key} is left out: {} follows no $ref{}, so each definition is written out \
                     where it is referenced",
                    self.name(),
                    if is_root {
                        ""
                    } else {
                        " to definitions below the root"
                    }
                ),
            );
            return Ok(());
        }
        let mut out = match built.out.shift_remove("$defs") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        for (name, schema) in defs {
            let here = push_segment(&push_segment(at, key), name);
            if out.contains_key(name) {
                return refuse(
                    &here,
                    format!("definition '{name}' is in both $defs and definitions"),
                );
            }
            out.insert(name.clone(), self.node(schema, &here, level + 1, false)?);
        }
        let out_key = if self.to_2020 { "$defs" } else { key };
        if key == "definitions" && self.to_2020 {
            self.report(
                at,
                key,
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                "definitions is written $defs, as JSON Schema 2020-12 names it (and every $ref to \
                 it follows)"
                    .into(),
            );
        }
        built.out.insert(out_key.into(), Value::Object(out));
        Ok(())
    }
}
