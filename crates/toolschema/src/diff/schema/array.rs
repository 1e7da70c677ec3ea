//! Arrays: `items` and tuples.

use super::*;

impl SchemaDiff<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn items(
        &mut self,
        o: Option<&Value>,
        n: Option<&Value>,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        at: &str,
        path: &str,
        depth: usize,
    ) {
        match (o, n) {
            (Some(Value::Array(_)), Some(Value::Array(_))) => {
                let rest = [old.get("additionalItems"), new.get("additionalItems")];
                self.tuple("items", o, n, rest, at, path, depth)
            }
            (Some(Value::Array(_)), _) | (_, Some(Value::Array(_))) => {
                self.constraint("items", o, n, at, path)
            }
            _ => self.compare(
                or_anything(o),
                or_anything(n),
                at,
                &join(path, "[]"),
                depth + 1,
            ),
        }
    }

    /// `prefixItems` (or `items` as a list), item by item. `rest` is what the old and the new
    /// schema say of the items after the list (`items`, or `additionalItems`), which an item
    /// meets once the list no longer reaches it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tuple(
        &mut self,
        key: &str,
        o: Option<&Value>,
        n: Option<&Value>,
        rest: [Option<&Value>; 2],
        at: &str,
        path: &str,
        depth: usize,
    ) {
        let empty = Vec::new();
        let old = o.and_then(Value::as_array).unwrap_or(&empty);
        let new = n.and_then(Value::as_array).unwrap_or(&empty);
        if (o.is_some() && !o.is_some_and(Value::is_array))
            || (n.is_some() && !n.is_some_and(Value::is_array))
        {
            return self.constraint(key, o, n, at, path);
        }
        let [old_rest, new_rest] = rest.map(|r| r.filter(|r| !r.is_array()));
        for i in 0..old.len().max(new.len()) {
            let item_path = format!("{path}[{i}]");
            let item_at = format!("{at}/{i}");
            let (a, b) = (old.get(i), new.get(i));
            if let (Some(a), None, None) = (a, b, new_rest) {
                if self.location.here.items {
                    // Nothing evaluates the item any more.
                    let message = format!(
                        "{key} entry {} removed from {}: {}",
                        short(Some(a)),
                        self.subject(&item_path),
                        self.left_unevaluated(false, true)
                    );
                    self.push(
                        ChangeCode::ConstraintRemoved,
                        Effect::Changes,
                        &item_at,
                        message,
                        Some(a.clone()),
                        None,
                    );
                    continue;
                }
            }
            self.compare(
                a.or(old_rest).unwrap_or(&ANYTHING),
                b.or(new_rest).unwrap_or(&ANYTHING),
                &item_at,
                &item_path,
                depth + 1,
            );
        }
    }
}
