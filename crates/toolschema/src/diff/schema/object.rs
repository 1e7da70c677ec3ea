//! Objects: properties added, removed and changed, `required`, and what undeclared members
//! may be.

use super::*;

impl SchemaDiff<'_> {
    pub(super) fn properties(
        &mut self,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        let not_map = |m: &Map<String, Value>| m.get("properties").is_some_and(|p| !p.is_object());
        if not_map(old) || not_map(new) {
            return self.constraint(
                "properties",
                old.get("properties"),
                new.get("properties"),
                at,
                path,
            );
        }
        let empty = Map::new();
        let old_props = old
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let new_props = new
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let old_required = required_names(old);
        let new_required = required_names(new);
        let names = union_keys(old_props, new_props);
        for name in names {
            let member_at = push_segment(at, name);
            let member_path = join(path, name);
            match (old_props.get(name.as_str()), new_props.get(name.as_str())) {
                (Some(o), Some(n)) => self.compare(o, n, &member_at, &member_path, depth + 1),
                (None, Some(n)) => {
                    self.property_added(name, n, old, &new_required, &member_at, &member_path);
                    self.new_text(n, &member_at, &member_path, depth + 1, &BTreeSet::new());
                }
                (Some(o), None) => {
                    // Its values now meet what the object says of undeclared members.
                    let rest = self.undeclared(new);
                    let was_required = old_required.contains(name.as_str());
                    let subject = self.subject(&member_path);
                    let (class, why) = match (self.direction, rest) {
                        (Direction::Input, Undeclared::Refused) => (
                            ChangeClass::Breaking,
                            "the object is closed: callers that send it are refused",
                        ),
                        (Direction::Input, Undeclared::Anything) => (
                            ChangeClass::Compatible,
                            "the object is open: it is no longer checked",
                        ),
                        (Direction::Input, Undeclared::Checked) => (
                            ChangeClass::Breaking,
                            "its values now meet what the object allows of undeclared members, \
                             which may refuse them",
                        ),
                        (Direction::Input, Undeclared::Unevaluated) => (
                            ChangeClass::Breaking,
                            "its values now meet unevaluatedProperties unless another keyword \
                             evaluates it, which may refuse them",
                        ),
                        (Direction::Output, _) if was_required => (
                            ChangeClass::Breaking,
                            "it was required: results promised it",
                        ),
                        (Direction::Output, Undeclared::Anything) => (
                            ChangeClass::Breaking,
                            "the object is open: its values are no longer promised",
                        ),
                        (Direction::Output, Undeclared::Checked) => (
                            ChangeClass::Breaking,
                            "its values now meet only what the object allows of undeclared members",
                        ),
                        (Direction::Output, Undeclared::Unevaluated) => (
                            ChangeClass::Breaking,
                            "its values now meet only what unevaluatedProperties allows",
                        ),
                        (Direction::Output, Undeclared::Refused) => {
                            (ChangeClass::Compatible, "it was optional")
                        }
                    };
                    self.push_class(
                        ChangeCode::PropertyRemoved,
                        class,
                        &member_at,
                        format!("{subject} removed ({why})"),
                        Some(o),
                        None,
                    );
                }
                (None, None) => {}
            }
        }
    }

    /// A member `name` that `properties` of the new schema declares and of the old does not.
    pub(super) fn property_added(
        &mut self,
        name: &str,
        n: &Value,
        old: &Map<String, Value>,
        new_required: &HashSet<&str>,
        at: &str,
        path: &str,
    ) {
        let subject = self.subject(path);
        if new_required.contains(name) {
            if required_names(old).contains(name) {
                // Required before without a declaration (any value): now it is checked.
                let message =
                    format!("{subject} declared with a schema (it was required, unchecked)");
                self.push(
                    ChangeCode::PropertyAdded,
                    Effect::Narrows,
                    at,
                    message,
                    None,
                    Some(n.clone()),
                );
            }
            // Otherwise a new required argument: reported with `required`.
            return;
        }
        // A name `propertyNames` listed, in an object that let undeclared members in, was
        // accepted with any value.
        let listed = self.undeclared(old) != Undeclared::Refused
            && listed_names(old).any(|listed| listed == name);
        if !is_anything(n) && (self.location.known_names.contains(name) || listed) {
            // Declared, required or named elsewhere at this location (beside a branch, in
            // another branch, by `propertyNames`): callers may send it, and its values must now
            // meet this schema.
            let message = format!(
                "{subject} declared with a schema here (callers could already send it: its \
                 values must now meet this schema too)"
            );
            self.push(
                ChangeCode::PropertyAdded,
                Effect::Narrows,
                at,
                message,
                None,
                Some(n.clone()),
            );
            return;
        }
        let message = match self.direction {
            Direction::Input => format!("new optional argument '{path}'"),
            Direction::Output => format!("new optional field '{path}'"),
        };
        // Its values met what the object allowed of undeclared members (a schema, patternProperties
        // entries, unevaluatedProperties); now they meet its own schema instead. In an object that
        // took any undeclared member, or none, a new optional member is compatible: callers do not
        // send what was never declared.
        // A patternProperties entry may have matched the name and let any value of it in.
        let patterns = old
            .get("patternProperties")
            .is_some_and(|p| p.as_object().is_none_or(|m| !m.is_empty()));
        let why = match self.undeclared(old) {
            _ if is_anything(n) => None,
            Undeclared::Anything if patterns => Some(
                "its values met what the object allowed of undeclared members; its own schema may \
                 refuse them",
            ),
            Undeclared::Checked => Some(
                "its values met what the object allowed of undeclared members; its own schema may \
                 refuse them",
            ),
            Undeclared::Unevaluated => Some(
                "unevaluatedProperties applies here: its values met what it allowed, or another \
                 keyword evaluated it; its own schema may refuse them",
            ),
            Undeclared::Anything | Undeclared::Refused => None,
        };
        match why {
            Some(why) => self.push(
                ChangeCode::PropertyAdded,
                Effect::Changes,
                at,
                format!("{message} ({why})"),
                None,
                Some(n.clone()),
            ),
            None => self.push_class(
                ChangeCode::PropertyAdded,
                ChangeClass::Compatible,
                at,
                message,
                None,
                Some(n),
            ),
        }
    }

    /// What an undeclared member of the object `schema` meets, counting an
    /// `unevaluatedProperties` of a schema that applies this one in place.
    pub(super) fn undeclared(&self, schema: &Map<String, Value>) -> Undeclared {
        let rest = undeclared_members(schema);
        // `additionalProperties` or `unevaluatedProperties` that take anything evaluate every
        // member: none is left to the one around.
        let evaluates_all = ["additionalProperties", "unevaluatedProperties"]
            .iter()
            .any(|key| schema.get(*key).is_some_and(is_anything));
        if rest == Undeclared::Anything && self.location.around.properties && !evaluates_all {
            Undeclared::Unevaluated
        } else {
            rest
        }
    }

    pub(super) fn required(
        &mut self,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        at: &str,
        path: &str,
    ) {
        let not_list = |m: &Map<String, Value>| {
            m.get("required").is_some_and(|r| {
                !r.as_array()
                    .is_some_and(|names| names.iter().all(Value::is_string))
            })
        };
        if not_list(old) || not_list(new) {
            return self.constraint(
                "required",
                old.get("required"),
                new.get("required"),
                at,
                path,
            );
        }
        let old_required = required_names(old);
        let new_required = required_names(new);
        let old_props = old.get("properties").and_then(Value::as_object);
        let new_props = new.get("properties").and_then(Value::as_object);
        let declared = |props: Option<&Map<String, Value>>, name: &str| {
            props.is_some_and(|p| p.contains_key(name))
        };
        for name in ordered(new, &new_required) {
            if old_required.contains(name) {
                continue;
            }
            let member_path = join(path, name);
            let is_new = declared(new_props, name) && !declared(old_props, name);
            let message = match (self.direction, is_new) {
                (Direction::Input, true) => format!("new required argument '{member_path}'"),
                (Direction::Output, true) => format!("new required field '{member_path}'"),
                (_, false) => format!("{} is now required", self.subject(&member_path)),
            };
            self.push(
                ChangeCode::RequiredAdded,
                Effect::Narrows,
                at,
                message,
                None,
                Some(Value::String(name.to_string())),
            );
        }
        for name in ordered(old, &old_required) {
            // A removed argument is reported as removed.
            if new_required.contains(name)
                || (declared(old_props, name) && !declared(new_props, name))
            {
                continue;
            }
            let member_path = join(path, name);
            let message = match self.direction {
                Direction::Input => format!("{} is no longer required", self.subject(&member_path)),
                Direction::Output => format!(
                    "{} is no longer required: results may leave it out",
                    self.subject(&member_path)
                ),
            };
            self.push(
                ChangeCode::RequiredRemoved,
                Effect::Widens,
                at,
                message,
                Some(Value::String(name.to_string())),
                None,
            );
        }
    }

    pub(super) fn openness(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        let (o_any, n_any) = (or_anything(o), or_anything(n));
        let parent = path
            .strip_suffix(".*")
            .or_else(|| path.strip_suffix('*'))
            .unwrap_or("");
        match (is_false_schema(o_any), is_false_schema(n_any)) {
            (false, true) => {
                let message = format!(
                    "{} is now closed ({key}: false): undeclared members are refused",
                    self.object_subject(parent)
                );
                self.push(
                    ChangeCode::ObjectClosed,
                    Effect::Narrows,
                    at,
                    message,
                    o.cloned(),
                    n.cloned(),
                );
            }
            (true, false) => {
                let message = format!(
                    "{} is now open ({key} {}): undeclared members are accepted",
                    self.object_subject(parent),
                    if n.is_some() {
                        "allows them"
                    } else {
                        "removed"
                    }
                );
                self.push(
                    ChangeCode::ObjectOpened,
                    Effect::Widens,
                    at,
                    message,
                    o.cloned(),
                    n.cloned(),
                );
            }
            _ => self.compare(o_any, n_any, at, path, depth + 1),
        }
    }

    /// `patternProperties`, entry by entry: a member a removed entry matched now meets what
    /// the object says of undeclared members, and a new entry may let members into a closed
    /// object as well as check those it matches.
    pub(super) fn patterns(
        &mut self,
        o: Option<&Value>,
        n: Option<&Value>,
        new_schema: &Map<String, Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        let empty = Map::new();
        let (old, new) = (
            o.map_or(Some(&empty), Value::as_object),
            n.map_or(Some(&empty), Value::as_object),
        );
        let (Some(old), Some(new)) = (old, new) else {
            return self.constraint("patternProperties", o, n, at, path);
        };
        let rest = self.undeclared(new_schema);
        let subject = self.object_subject(path);
        for name in union_keys(old, new) {
            let member_at = push_segment(at, name);
            let pattern = visible(name);
            let (a, b) = (old.get(name.as_str()), new.get(name.as_str()));
            let (code, effect, message) = match (a, b) {
                (Some(a), Some(b)) => {
                    self.compare(a, b, &member_at, path, depth + 1);
                    continue;
                }
                (None, None) => continue,
                (Some(_), None) if rest == Undeclared::Anything => (
                    ChangeCode::ConstraintRemoved,
                    Effect::Widens,
                    format!("patternProperties '{pattern}' removed from {subject}"),
                ),
                (Some(_), None) => (
                    ChangeCode::ConstraintChanged,
                    Effect::Changes,
                    format!(
                        "patternProperties '{pattern}' removed from {subject}: the members it \
                         matched now meet what the object allows of undeclared members{}",
                        match rest {
                            Undeclared::Refused => " (none)",
                            Undeclared::Unevaluated => " (unevaluatedProperties)",
                            Undeclared::Anything | Undeclared::Checked => "",
                        }
                    ),
                ),
                (None, Some(_)) if rest == Undeclared::Anything => (
                    ChangeCode::ConstraintAdded,
                    Effect::Narrows,
                    format!("patternProperties '{pattern}' added to {subject}"),
                ),
                (None, Some(_)) => (
                    ChangeCode::ConstraintChanged,
                    Effect::Changes,
                    format!(
                        "patternProperties '{pattern}' added to {subject}: members it matches \
                         are now checked by it, not by what the object allows of undeclared members"
                    ),
                ),
            };
            self.push(code, effect, &member_at, message, a.cloned(), b.cloned());
            if let (None, Some(b)) = (a, b) {
                self.new_text(b, &member_at, path, depth + 1, &BTreeSet::new());
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn members(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
        depth: usize,
        definitions: bool,
    ) {
        let empty = Value::Object(Map::new());
        let (o_or_empty, n_or_empty) = if definitions {
            (o.or(Some(&empty)), n.or(Some(&empty)))
        } else {
            (o, n)
        };
        let (Some(Value::Object(old)), Some(Value::Object(new))) = (o_or_empty, n_or_empty) else {
            if definitions {
                let message = format!("{key} of {} changed", self.subject(path));
                return self.push_class(
                    ChangeCode::SchemaAnnotationChanged,
                    ChangeClass::Security,
                    at,
                    message,
                    o,
                    n,
                );
            }
            return self.constraint(key, o, n, at, path);
        };
        let names = union_keys(old, new);
        for name in names {
            let member_at = push_segment(at, name);
            match (old.get(name.as_str()), new.get(name.as_str())) {
                (Some(a), Some(b)) if definitions => {
                    self.compare(a, b, &member_at, path, depth + 1)
                }
                (Some(a), Some(b)) => self.compare_in_place(a, b, &member_at, path, depth + 1),
                (a, b) if definitions => {
                    // A definition no `$ref` uses only adds text the model may read.
                    let message = format!(
                        "unused definition '{}' {} in {}",
                        visible(name),
                        if a.is_some() { "removed" } else { "added" },
                        self.subject(path)
                    );
                    self.push_class(
                        ChangeCode::SchemaAnnotationChanged,
                        ChangeClass::Security,
                        &member_at,
                        message,
                        a,
                        b,
                    );
                    if let (None, Some(b)) = (a, b) {
                        self.new_text(b, &member_at, path, depth + 1, &BTreeSet::new());
                    }
                }
                (Some(a), None) if self.location.here.any() => {
                    let message = format!(
                        "{key} '{}' {} removed from {}: {}",
                        visible(name),
                        short(Some(a)),
                        self.subject(path),
                        self.left_unevaluated(true, true)
                    );
                    self.push(
                        ChangeCode::ConstraintRemoved,
                        Effect::Changes,
                        &member_at,
                        message,
                        Some(a.clone()),
                        None,
                    );
                }
                (a, b) => {
                    self.constraint(
                        &format!("{key} '{}'", visible(name)),
                        a,
                        b,
                        &member_at,
                        path,
                    );
                    if let (None, Some(b)) = (a, b) {
                        // A `dependentSchemas` entry applies in place: names known here stay so.
                        let known = Rc::clone(&self.location.known_names);
                        self.new_text(b, &member_at, path, depth + 1, &known);
                    }
                }
            }
        }
    }
}

/// What an object's members that `properties` does not declare must meet, as far as the diff
/// can tell without matching patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Undeclared {
    /// Any value (no `additionalProperties`, or `true`, `{}`): whatever a `patternProperties`
    /// entry that matches asks, it asks no more than a declaration did with it.
    Anything,
    /// Nothing: the object is closed and no `patternProperties` entry may let them in.
    Refused,
    /// A schema (`additionalProperties`, `patternProperties` entries): what it accepts is not
    /// known here.
    Checked,
    /// An `unevaluatedProperties` (here, beside keywords that evaluate members elsewhere, or in a
    /// schema that applies this one in place): what it accepts, and which members other
    /// keywords evaluate, is not known here.
    Unevaluated,
}

/// Whether `key` applies other schemas to the same object, whose members then count as evaluated
/// for `unevaluatedProperties`: a reference, or an in-place applicator but `not` (whose
/// annotations are dropped) and draft-07's `dependencies` (which the validator's
/// `unevaluatedProperties` does not look into).
pub(super) fn evaluates_in_place(key: &str) -> bool {
    vocabulary::is_reference(key)
        || (!matches!(key, "not" | "dependencies") && vocabulary::role(key) == Some(Role::InPlace))
}

/// What an undeclared member of the object `schema` meets.
pub(super) fn undeclared_members(schema: &Map<String, Value>) -> Undeclared {
    let rest = match schema.get("additionalProperties") {
        Some(additional) if is_false_schema(additional) => Undeclared::Refused,
        Some(additional) if !is_anything(additional) => Undeclared::Checked,
        // `additionalProperties` evaluates every member it sees: none is left unevaluated.
        Some(_) => Undeclared::Anything,
        None => match schema.get("unevaluatedProperties") {
            None => Undeclared::Anything,
            Some(unevaluated) if is_anything(unevaluated) => Undeclared::Anything,
            Some(unevaluated)
                if is_false_schema(unevaluated)
                    && !schema.keys().any(|k| evaluates_in_place(k)) =>
            {
                Undeclared::Refused
            }
            Some(_) => Undeclared::Unevaluated,
        },
    };
    let patterns = schema
        .get("patternProperties")
        .is_some_and(|p| p.as_object().is_none_or(|m| !m.is_empty()));
    match rest {
        Undeclared::Refused if patterns => Undeclared::Checked,
        rest => rest,
    }
}

/// The names a `propertyNames` of `enum` or `const` strings lists: the only member names the
/// object takes.
pub(super) fn listed_names(schema: &Map<String, Value>) -> impl Iterator<Item = &str> {
    let names = schema.get("propertyNames").and_then(Value::as_object);
    let listed = names.and_then(|n| n.get("enum")).and_then(Value::as_array);
    let single = names.and_then(|n| n.get("const"));
    listed
        .into_iter()
        .flatten()
        .chain(single)
        .filter_map(Value::as_str)
}

pub(super) fn required_names(schema: &Map<String, Value>) -> HashSet<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The names of `set` in the order `schema`'s `required` lists them, each once.
pub(super) fn ordered<'a>(schema: &'a Map<String, Value>, set: &HashSet<&'a str>) -> Vec<&'a str> {
    let mut seen = HashSet::new();
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|n| set.contains(n) && seen.insert(*n))
        .collect()
}
