//! What a profile does not read: dropped, or moved into the description in plain words,
//! and reported either way.

use super::*;

impl<'a> Adaptation<'a> {
    /// A keyword the profile does not read: its sentence goes into the description, or, when it
    /// has none, it is dropped. Both are reported.
    pub(super) fn unsupported(
        &mut self,
        key: &str,
        value: &Value,
        source: &Map<String, Value>,
        at: &str,
        built: &mut AdaptedMembers,
    ) {
        let annotation = describes_only(key);
        let closed = is_closed(source);
        let accepts = if annotation {
            Accepts::Same
        } else if key == "patternProperties" && closed {
            Accepts::Less
        } else if (key == "additionalProperties" || key == "unevaluatedProperties")
            && matches!(value, Value::Bool(true))
        {
            Accepts::Same
        } else {
            Accepts::More
        };
        if matches!(key, "additionalProperties" | "unevaluatedProperties") {
            if value == &Value::Bool(false) {
                self.report(
                    at,
                    key,
                    LossAction::Dropped,
                    Accepts::More,
                    Topic::Unsupported,
                    format!(
                        "{} has no {key}: undeclared properties are no longer refused by the \
                         schema (the server's own check still applies)",
                        self.name()
                    ),
                );
                return;
            }
            if value == &Value::Bool(true) || value == &Value::Object(Map::new()) {
                self.report(
                    at,
                    key,
                    LossAction::Dropped,
                    Accepts::Same,
                    Topic::Unsupported,
                    format!("{} has no {key}; {value} said nothing more", self.name()),
                );
                return;
            }
        }
        if describe::sentence(key, value).is_some() {
            self.move_to_description(key, value, at, built, accepts, None);
            return;
        }
        let effect = match accepts {
            Accepts::Same => "it did not constrain the arguments",
            _ => "the schema no longer enforces it",
        };
        self.report(
            at,
            key,
            LossAction::Dropped,
            accepts,
            Topic::Unsupported,
            format!("{} does not read {key}: dropped; {effect}", self.name()),
        );
    }

    pub(super) fn move_to_description(
        &mut self,
        key: &str,
        value: &Value,
        at: &str,
        built: &mut AdaptedMembers,
        accepts: Accepts,
        note: Option<String>,
    ) {
        let Some(sentence) = describe::sentence(key, value) else {
            self.report(
                at,
                key,
                LossAction::Dropped,
                accepts,
                Topic::Unsupported,
                format!("{} does not read {key}: dropped", self.name()),
            );
            return;
        };
        let note = note.map(|n| format!(" ({n})")).unwrap_or_default();
        self.report(
            at,
            key,
            LossAction::MovedToDescription,
            accepts,
            Topic::Unsupported,
            format!(
                "{} does not read {key}{note}: the description says \"{sentence}\" instead",
                self.name()
            ),
        );
        if !built.sentences.contains(&sentence) {
            built.sentences.push(sentence);
        }
    }
}
