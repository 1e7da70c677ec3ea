//! `anyOf`, `oneOf` and the keywords that see what other subschemas evaluated.

use super::*;

impl SchemaDiff<'_> {
    pub(super) fn branches(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        let (Some(Value::Array(old)), Some(Value::Array(new))) = (o, n) else {
            return self.constraint(key, o, n, at, path);
        };
        let mut new_matched = vec![false; new.len()];
        let mut old_unmatched = Vec::new();
        for (i, branch) in old.iter().enumerate() {
            match (0..new.len()).find(|&j| !new_matched[j] && same_value(branch, &new[j])) {
                Some(j) => new_matched[j] = true,
                None => old_unmatched.push(i),
            }
        }
        let new_unmatched: Vec<usize> = (0..new.len()).filter(|&j| !new_matched[j]).collect();
        // A value is accepted by oneOf when exactly one branch accepts it: a branch that accepts
        // more, or a new one, may make a value match two branches and be refused; a branch that
        // accepts less, or one removed, may leave a value that matched two with one, accepted.
        // Unless the branches are proved disjoint, any change of what a branch accepts is
        // breaking both ways.
        let one = key == "oneOf";
        if old_unmatched.len() == new_unmatched.len() {
            let first = self.changes.len();
            for (&i, &j) in old_unmatched.iter().zip(&new_unmatched) {
                self.compare_in_place(&old[i], &new[j], &format!("{at}/{j}"), path, depth + 1);
            }
            if one {
                for change in &mut self.changes[first..] {
                    let same_values = change.code == ChangeCode::SchemaRewritten;
                    if change.class == ChangeClass::Compatible && !same_values {
                        change.class = ChangeClass::Breaking;
                        change.message.push_str(ONE_OF_COUNTS);
                    }
                }
            }
            return;
        }
        // More branches of anyOf accept more; more branches of allOf accept less.
        let all = key == "allOf";
        let subject = self.subject(path);
        for &j in &new_unmatched {
            let (code, effect) = if all {
                (ChangeCode::BranchRemoved, Effect::Narrows)
            } else if one {
                (ChangeCode::BranchAdded, Effect::Changes)
            } else {
                (ChangeCode::BranchAdded, Effect::Widens)
            };
            let mut message = format!("{key} branch {} added to {subject}", short(Some(&new[j])));
            if one {
                message.push_str(ONE_OF_COUNTS);
            }
            let branch_at = format!("{at}/{j}");
            self.push(
                code,
                effect,
                &branch_at,
                message,
                None,
                Some(new[j].clone()),
            );
            let known = Rc::clone(&self.location.known_names);
            self.new_text(&new[j], &branch_at, path, depth + 1, &known);
        }
        for &i in &old_unmatched {
            // Under unevaluated*, an allOf branch that goes may take with it the evaluation of
            // members that are then refused.
            let unevaluated = all && self.location.here.any();
            let (code, effect) = if unevaluated {
                (ChangeCode::BranchAdded, Effect::Changes)
            } else if all {
                (ChangeCode::BranchAdded, Effect::Widens)
            } else if one {
                (ChangeCode::BranchRemoved, Effect::Changes)
            } else {
                (ChangeCode::BranchRemoved, Effect::Narrows)
            };
            let mut message = format!(
                "{key} branch {} removed from {subject}",
                short(Some(&old[i]))
            );
            if one && self.direction == Direction::Output {
                message.push_str(ONE_OF_COUNTS);
            }
            if unevaluated {
                message = format!("{message}: {}", self.left_unevaluated(true, true));
            }
            self.push(
                code,
                effect,
                &format!("{at}/{i}"),
                message,
                Some(old[i].clone()),
                None,
            );
        }
    }

    /// Where an `unevaluatedProperties` or `unevaluatedItems` applies, a keyword that evaluates
    /// members (items) is more than a declaration: the members it evaluated and no other keyword
    /// does are left to the `unevaluated*` keyword, which may refuse them. Reports, as breaking, a
    /// change that may take evaluation away, and says whether it did.
    pub(super) fn evaluation_lost(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        at: &str,
        path: &str,
    ) -> bool {
        let (around, here) = (self.location.around, self.location.here);
        // Gone, and it evaluated something (`false` refused what it saw instead).
        let removed = o.is_some_and(|v| !is_false_schema(v)) && n.is_none();
        let (properties, items) = match key {
            "additionalProperties" => (here.properties && removed, false),
            "unevaluatedProperties" => (around.properties && removed, false),
            "items" | "additionalItems" | "contains" => (false, here.items && removed),
            "unevaluatedItems" => (false, around.items && removed),
            "allOf" | "anyOf" | "oneOf" | "dependentSchemas" | "$ref" | "$dynamicRef"
            | "$recursiveRef" => (here.properties && removed, here.items && removed),
            // `if` evaluates whatever it sees when it holds, even without `then` or `else`; which
            // members it (and so `then` or `else`) evaluates may differ after any change.
            "if" | "then" | "else" => (here.properties, here.items),
            _ => (false, false),
        };
        if !properties && !items {
            return false;
        }
        let subject = self.subject(path);
        let (code, message) = match (o, n) {
            (Some(_), None) => (
                ChangeCode::ConstraintRemoved,
                format!("{key} {} removed from {subject}", short(o)),
            ),
            (None, _) => (
                ChangeCode::ConstraintAdded,
                format!("{key} {} added to {subject}", short(n)),
            ),
            (Some(_), Some(_)) => (
                ChangeCode::ConstraintChanged,
                format!(
                    "{key} of {subject} changed from {} to {}",
                    short(o),
                    short(n)
                ),
            ),
        };
        let message = format!("{message}: {}", self.left_unevaluated(properties, items));
        self.push(code, Effect::Changes, at, message, o.cloned(), n.cloned());
        true
    }

    /// Why a change that may take evaluation away is breaking, for messages.
    pub(super) fn left_unevaluated(&self, properties: bool, items: bool) -> &'static str {
        let Unevaluated {
            properties: p,
            items: i,
        } = self.location.here;
        match (properties && p, items && i) {
            (true, false) => {
                "members it evaluated may now be left to unevaluatedProperties, which may refuse them"
            }
            (false, true) => {
                "items it evaluated may now be left to unevaluatedItems, which may refuse them"
            }
            _ => {
                "members and items it evaluated may now be left to unevaluatedProperties and \
                 unevaluatedItems, which may refuse them"
            }
        }
    }
}
