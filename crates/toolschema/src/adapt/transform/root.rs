//! The root of a schema: what every provider asks of the top level (an object, one
//! shape rather than a union of them), and the parameter names it accepts.

use super::*;

impl<'a> Adaptation<'a> {
    pub(super) fn root_schema(&mut self) -> Step<Value> {
        let Some(map) = self.root.as_object() else {
            return refuse("", "the inputSchema is not an object");
        };
        let mut map = self.ref_siblings_read(map, "").into_owned();
        // A root that is a reference: the provider needs the object itself.
        if let Some(reference) = map.get("$ref").and_then(Value::as_str).map(str::to_string) {
            let (target, at) = self.target(&reference, "")?;
            let target = target.as_object().cloned().unwrap_or_default();
            map.shift_remove("$ref");
            map = self.combine(target, map, "", &at)?;
            self.report(
                "",
                "$ref",
                LossAction::Rewritten,
                Accepts::Same,
                Topic::Rewrite,
                format!(
                    "the root refers to {reference}; {} needs the object at the root, so it is \
                     written out there",
                    self.name()
                ),
            );
        }
        if map.contains_key("allOf") {
            map = self.merge_all_of(&map, "")?;
        }
        // What no provider takes at the root, said in words instead.
        let mut sentences = Vec::new();
        for keyword in ["enum", "const", "not"] {
            let Some(value) = map.shift_remove(keyword) else {
                continue;
            };
            let sentence = describe::sentence(keyword, &value)
                .unwrap_or_else(|| format!("Must match {keyword} {value}."));
            self.report(
                "",
                keyword,
                LossAction::MovedToDescription,
                Accepts::More,
                Topic::Unsupported,
                format!(
                    "{} accepts no {keyword} at the root: the description says \"{sentence}\" \
                     instead",
                    self.name()
                ),
            );
            sentences.push(sentence);
        }
        if !sentences.is_empty() {
            let text = describe::append(map.get("description").and_then(Value::as_str), &sentences);
            map.insert("description".into(), Value::String(text));
        }
        // No provider takes a composition at the root today; the profile says so.
        if !self.profile.root.rule.composition
            && (map.contains_key("anyOf") || map.contains_key("oneOf"))
        {
            map = self.reshape_root_union(map)?;
        }
        match map.get("type").cloned() {
            Some(Value::String(t)) if t == "object" => {}
            None => {
                map.insert("type".into(), Value::String("object".into()));
                self.report(
                    "",
                    "type",
                    LossAction::Rewritten,
                    Accepts::Same,
                    Topic::Rewrite,
                    format!(
                        "the root has no type; {} needs \"type\": \"object\" (the arguments of a \
                         call are always an object)",
                        self.name()
                    ),
                );
            }
            Some(Value::Array(list)) if list.iter().any(|t| t == "object") => {
                map.insert("type".into(), Value::String("object".into()));
                let list = Value::Array(list);
                self.report(
                    "",
                    "type",
                    LossAction::Rewritten,
                    Accepts::Same,
                    Topic::Rewrite,
                    format!(
                        "the root's type list {} is written \"object\": the arguments of a call \
                         are always an object, as {} requires",
                        list,
                        self.name()
                    ),
                );
            }
            Some(other) => {
                return refuse(
                    "/type",
                    format!(
                        "the root has \"type\": {other}; the arguments of a call are an object, \
                         and {} accepts only an object root",
                        self.name()
                    ),
                )
            }
        }
        self.node(&Value::Object(map), "", 0, true)
    }

    /// A root `anyOf`/`oneOf` of object forms, as one object: every form's properties, required
    /// only what every form requires. Refused when a form is not an object or carries keywords
    /// that cannot be merged.
    pub(super) fn reshape_root_union(
        &mut self,
        mut map: Map<String, Value>,
    ) -> Step<Map<String, Value>> {
        let (keyword, other) = if map.contains_key("anyOf") {
            ("anyOf", "oneOf")
        } else {
            ("oneOf", "anyOf")
        };
        if map.contains_key(other) {
            return refuse(
                "",
                format!(
                    "the root has both anyOf and oneOf; {} accepts no composition at the root and \
                     the two cannot be merged into one object",
                    self.name()
                ),
            );
        }
        let branches = match map.shift_remove(keyword) {
            Some(Value::Array(b)) => b,
            _ => return refuse(&format!("/{keyword}"), format!("{keyword} is not a list")),
        };
        let mut forms: Vec<Map<String, Value>> = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            let at = format!("/{keyword}/{i}");
            let mut form = match branch {
                Value::Bool(true) => Map::new(),
                Value::Object(m) => self.ref_siblings_read(m, &at).into_owned(),
                _ => {
                    return refuse(
                        &at,
                        format!(
                            "form {} of the root {keyword} accepts nothing; no object can stand \
                             for the union",
                            i + 1
                        ),
                    )
                }
            };
            if let Some(reference) = form.get("$ref").and_then(Value::as_str).map(str::to_string) {
                let (target, target_at) = self.target(&reference, &at)?;
                let target = target.as_object().cloned().unwrap_or_default();
                form.shift_remove("$ref");
                form = self.combine(target, form, &at, &target_at)?;
            }
            if form.contains_key("allOf") {
                form = self.merge_all_of(&form, &at)?;
            }
            let object_like = match form.get("type") {
                None => true,
                Some(Value::String(t)) => t == "object",
                Some(_) => false,
            };
            if !object_like {
                return refuse(
                    &at,
                    format!(
                        "form {} of the root {keyword} is not an object; the arguments of a call \
                         are an object, so the union cannot be made one object soundly",
                        i + 1
                    ),
                );
            }
            let mergeable = [
                "type",
                "properties",
                "required",
                "additionalProperties",
                "description",
                "title",
                "$comment",
            ];
            if let Some(k) = form.keys().find(|k| !mergeable.contains(&k.as_str())) {
                return refuse(
                    &format!("{at}/{k}"),
                    format!(
                        "form {} of the root {keyword} has {k}, which cannot be carried into one \
                         object soundly",
                        i + 1
                    ),
                );
            }
            forms.push(form);
        }
        if forms.is_empty() {
            return refuse(
                &format!("/{keyword}"),
                format!("the root {keyword} is empty"),
            );
        }
        let mut properties = match map.shift_remove("properties") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        };
        let mut required: Option<Vec<String>> = None;
        let mut summaries = Vec::new();
        for (i, form) in forms.iter().enumerate() {
            let names: Vec<String> = form
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            for (name, schema) in form
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                match properties.get_mut(name) {
                    None => {
                        properties.insert(name.clone(), schema.clone());
                    }
                    Some(existing) if existing == schema => {}
                    Some(existing) => {
                        let alternatives = match existing.get("anyOf") {
                            Some(Value::Array(a))
                                if existing.as_object().is_some_and(|m| m.len() == 1) =>
                            {
                                let mut a = a.clone();
                                a.push(schema.clone());
                                a
                            }
                            _ => vec![existing.clone(), schema.clone()],
                        };
                        *existing = serde_json::json!({ "anyOf": alternatives });
                    }
                }
            }
            let form_required: Vec<String> = form
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            required = Some(match required {
                None => form_required.clone(),
                Some(so_far) => so_far
                    .into_iter()
                    .filter(|n| form_required.contains(n))
                    .collect(),
            });
            let what = form
                .get("description")
                .or_else(|| form.get("title"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| {
                    if names.is_empty() {
                        "no arguments".to_string()
                    } else {
                        format!("with {}", names.join(", "))
                    }
                });
            let needs = if form_required.is_empty() {
                String::new()
            } else {
                format!(" (requires {})", form_required.join(", "))
            };
            summaries.push(format!("{}) {what}{needs}", i + 1));
        }
        let mut required_all: Vec<String> = match map.shift_remove("required") {
            Some(Value::Array(r)) => r
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        for name in required.unwrap_or_default() {
            if !required_all.contains(&name) {
                required_all.push(name);
            }
        }
        let closed = forms.iter().all(is_closed);
        for (i, form) in forms.iter().enumerate() {
            let at = format!("/{keyword}/{i}");
            let loose: Vec<&str> = form
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|n| !required_all.iter().any(|r| r == n))
                .collect();
            if !loose.is_empty() {
                self.report(
                    &at,
                    "required",
                    LossAction::Widened,
                    Accepts::More,
                    Topic::Widening,
                    format!(
                        "{} accepts no {keyword} at the root: form {} requires {}, which the \
                         merged object cannot require (another form does not); the description \
                         says so",
                        self.name(),
                        i + 1,
                        quoted(&loose)
                    ),
                );
            }
            if is_closed(form) && !closed {
                self.report(
                    &at,
                    "additionalProperties",
                    LossAction::Widened,
                    Accepts::More,
                    Topic::Widening,
                    format!(
                        "{} accepts no {keyword} at the root: form {} is closed but another form \
                         is not, so the merged object takes properties it does not declare",
                        self.name(),
                        i + 1
                    ),
                );
            }
        }
        let sentence = format!("Send one of these forms: {}.", summaries.join("; "));
        let description =
            describe::append(map.get("description").and_then(Value::as_str), &[sentence]);
        map.insert("type".into(), Value::String("object".into()));
        map.insert("description".into(), Value::String(description));
        map.insert("properties".into(), Value::Object(properties));
        if !required_all.is_empty() {
            map.insert(
                "required".into(),
                Value::Array(required_all.into_iter().map(Value::String).collect()),
            );
        }
        if closed && !map.contains_key("additionalProperties") {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
        let (action, accepts) = if forms.len() == 1 {
            (LossAction::Rewritten, Accepts::Same)
        } else {
            (LossAction::Widened, Accepts::More)
        };
        self.report(
            "",
            keyword,
            action,
            accepts,
            Topic::Widening,
            format!(
                "{} accepts no {keyword} at the root: its {} object forms became one object with \
                 the properties of every form, requiring only what every form requires (the forms \
                 are listed in the description; restore_arguments checks a call against the \
                 original forms)",
                self.name(),
                forms.len()
            ),
        );
        Ok(map)
    }

    /// Root properties renamed to the profile's parameter-name rule.
    pub(super) fn rename_parameters(&mut self, adapted: &mut Value) -> Step<Vec<(String, String)>> {
        let Some(rule) = self.profile.parameter_name else {
            return Ok(Vec::new());
        };
        let Some(Value::Object(properties)) = adapted.get("properties") else {
            return Ok(Vec::new());
        };
        let names: Vec<&str> = properties.keys().map(String::as_str).collect();
        if names.iter().all(|n| rule.rule.accepts(n)) {
            return Ok(Vec::new());
        }
        let assigned = crate::adapt::names::assign(&rule.rule, &names);
        let mut renamed = Vec::new();
        for (old, new) in names.iter().zip(&assigned) {
            let Some(new) = new else { continue };
            if old != new {
                renamed.push((new.clone(), (*old).to_string()));
            }
        }
        drop(names);
        for (new, old) in &renamed {
            self.report(
                &push_segment("/properties", old),
                "properties",
                LossAction::Renamed,
                Accepts::Reshaped,
                Topic::Name,
                format!(
                    "{} parameter names must match {}: '{old}' is sent as '{new}' \
                     (restore_arguments maps it back)",
                    self.name(),
                    rule.rule.pattern()
                ),
            );
        }
        let Some(map) = adapted.as_object_mut() else {
            return Ok(renamed);
        };
        if let Some(Value::Object(properties)) = map.get_mut("properties") {
            let old = std::mem::take(properties);
            for (name, schema) in old {
                let new = renamed
                    .iter()
                    .find(|(_, o)| *o == name)
                    .map_or(name, |(n, _)| n.clone());
                properties.insert(new, schema);
            }
        }
        if let Some(Value::Array(required)) = map.get_mut("required") {
            for name in required.iter_mut() {
                if let Some((new, _)) = renamed
                    .iter()
                    .find(|(_, o)| Some(o.as_str()) == name.as_str())
                {
                    *name = Value::String(new.clone());
                }
            }
        }
        Ok(renamed)
    }
}
