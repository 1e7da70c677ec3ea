//! Bounds and formats: a limit raised or lowered, a constraint added or removed, a `pattern`
//! or `format` changed.

use super::*;

impl SchemaDiff<'_> {
    pub(super) fn pattern_or_format(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) {
        let pattern = key == "pattern";
        let subject = self.subject(path);
        let (code, effect, message) = match (o, n) {
            (None, Some(_)) => (
                if pattern {
                    ChangeCode::PatternAdded
                } else {
                    ChangeCode::FormatAdded
                },
                Effect::Narrows,
                format!("{key} {} added to {subject}", short(n)),
            ),
            (Some(_), None) => (
                if pattern {
                    ChangeCode::PatternRemoved
                } else {
                    ChangeCode::FormatRemoved
                },
                Effect::Widens,
                format!("{key} {} removed from {subject}", short(o)),
            ),
            _ => (
                if pattern {
                    ChangeCode::PatternChanged
                } else {
                    ChangeCode::FormatChanged
                },
                Effect::Changes,
                format!(
                    "{key} of {subject} changed from {} to {}",
                    short(o),
                    short(n)
                ),
            ),
        };
        self.push(code, effect, at, message, o.cloned(), n.cloned());
    }

    pub(super) fn bound(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) {
        // A length or count of at least 0 is no bound at all.
        let counts_from_zero = matches!(key, "minLength" | "minItems" | "minProperties");
        let no_bound = |v: &Option<Option<&serde_json::Number>>| {
            counts_from_zero
                && v.flatten()
                    .is_some_and(|n| compare_numbers(n, &0.into()) == Some(Ordering::Equal))
        };
        let (old_bound, new_bound) = (o.map(Value::as_number), n.map(Value::as_number));
        let old_bound = if no_bound(&old_bound) {
            None
        } else {
            old_bound
        };
        let new_bound = if no_bound(&new_bound) {
            None
        } else {
            new_bound
        };
        let upper = vocabulary::lookup(key).is_some_and(|k| k.bound == Some(Bound::Upper));
        let effect = match (old_bound, new_bound) {
            (Some(None), _) | (_, Some(None)) => return self.constraint(key, o, n, at, path),
            (None, Some(_)) => Effect::Narrows,
            (Some(_), None) => Effect::Widens,
            // Compared exactly: 2^53 + 1 and 2^53 are one 64-bit float but two bounds.
            (Some(Some(a)), Some(Some(b))) => match compare_numbers(a, b) {
                Some(Ordering::Equal) => return,
                Some(Ordering::Greater) if upper => Effect::Narrows,
                Some(Ordering::Less) if !upper => Effect::Narrows,
                Some(_) => Effect::Widens,
                None => Effect::Changes,
            },
            (None, None) => return,
        };
        let (code, verb) = match effect {
            Effect::Narrows => (ChangeCode::BoundTightened, "tightened"),
            Effect::Widens => (ChangeCode::BoundLoosened, "loosened"),
            Effect::Changes => (ChangeCode::ConstraintChanged, "changed"),
        };
        let show = |v: Option<&Value>| v.map_or("none".to_string(), |v| short(Some(v)));
        let message = format!(
            "{key} of {} {verb} from {} to {}",
            self.subject(path),
            show(o),
            show(n)
        );
        self.push(code, effect, at, message, o.cloned(), n.cloned());
    }

    pub(super) fn constraint(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) {
        let subject = self.subject(path);
        // `uniqueItems: false` is the same as no `uniqueItems`.
        let o = o.filter(|v| !(key == "uniqueItems" && **v == Value::Bool(false)));
        let n = n.filter(|v| !(key == "uniqueItems" && **v == Value::Bool(false)));
        let (code, effect, message) = match (o, n) {
            (None, None) => return,
            (None, Some(value)) if key == "const" => {
                let message = format!("{key} {} added to {subject}", shown(value));
                return self.push_values(
                    ChangeCode::ConstraintAdded,
                    Effect::Narrows,
                    at,
                    message,
                    None,
                    Some(value),
                );
            }
            (None, Some(_)) => (
                ChangeCode::ConstraintAdded,
                Effect::Narrows,
                format!("{key} {} added to {subject}", short(n)),
            ),
            // A `$ref` left as written (recursive, unresolved, or in a dialect toolschema does
            // not know) may be what made the keywords beside it ignored (draft-07 and older):
            // without it they may apply.
            (Some(_), None) if vocabulary::is_reference(key) => (
                ChangeCode::ConstraintRemoved,
                Effect::Changes,
                format!(
                    "{key} {} removed from {subject} (keywords beside it may now apply)",
                    short(o)
                ),
            ),
            (Some(_), None) => (
                ChangeCode::ConstraintRemoved,
                Effect::Widens,
                format!("{key} {} removed from {subject}", short(o)),
            ),
            (Some(a), Some(b)) => {
                let effect = match (key, a.as_f64(), b.as_f64()) {
                    // A multiple of a multiple accepts less; of a divisor, more.
                    ("multipleOf", Some(a), Some(b)) if a > 0.0 && b > 0.0 => {
                        if (b / a).fract() == 0.0 {
                            Effect::Narrows
                        } else if (a / b).fract() == 0.0 {
                            Effect::Widens
                        } else {
                            Effect::Changes
                        }
                    }
                    _ => Effect::Changes,
                };
                (
                    ChangeCode::ConstraintChanged,
                    effect,
                    format!(
                        "{key} of {subject} changed from {} to {}",
                        short(o),
                        short(n)
                    ),
                )
            }
        };
        self.push(code, effect, at, message, o.cloned(), n.cloned());
    }
}
