//! What the gate does with each kind of call it checks, as its user configures it.

/// What the proxy does with a result whose `structuredContent` breaks the tool's `outputSchema`.
/// Read from a settings file as on the command line (`off`, `warn`, `enforce`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputCheck {
    /// Do not check.
    Off,
    /// Report it on stderr and in the audit log; pass the result on.
    #[default]
    Warn,
    /// Replace the result with an `isError` result that says what was wrong.
    Enforce,
}

/// Whether the proxy checks `tools/call` arguments, and what it does with a call that fails.
/// Read from a settings file as on the command line (`off`, `warn`, `enforce`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputCheck {
    /// Do not check: every call the policy allows is forwarded.
    Off,
    /// Check, report what fails on stderr and in the audit log, and forward the call anyway
    /// (a gradual roll-out).
    Warn,
    /// Answer a call whose arguments break the schema, or whose tool's schema cannot be learned,
    /// with a tool error; it never reaches the server.
    #[default]
    Enforce,
}

/// What the proxy does with top-level arguments the tool's schema does not declare, where the
/// schema itself accepts them (it has no `additionalProperties`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnknownArguments {
    /// What the schema says: accepted.
    #[default]
    Allow,
    /// Accepted, and reported on stderr and in the audit log.
    Warn,
    /// Refused like any other error, with a did-you-mean.
    Reject,
}

/// What the proxy does with a call it cannot check because it could not learn the tool's
/// schema (no listing, a schema that does not compile, a `$ref` it never fetches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnUnchecked {
    /// Answer it with a tool error that says why.
    #[default]
    Refuse,
    /// Forward it, with a warning on stderr for each call.
    Forward,
}

/// What the proxy does with a call to a tool the server has not listed, neither in a listing
/// that passed through nor in one the proxy made itself when the call came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unlisted {
    /// Answer it with an error naming the closest listed tool; it never reaches the server.
    #[default]
    Refuse,
    /// Forward it unchecked (for servers with tools they do not list), with a warning.
    Forward,
}

/// Each mode as a clap value, named as on the command line. Written out rather than derived: a
/// derive would show the variants' documentation, written for this API, in `--help`, where each
/// flag's own help already says what its values do.
#[cfg(feature = "clap")]
macro_rules! clap_values {
    ($($mode:ident { $($variant:ident => $name:literal),+ $(,)? })+) => {$(
        impl clap::ValueEnum for $mode {
            fn value_variants<'a>() -> &'a [Self] {
                &[$($mode::$variant),+]
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(match self {
                    $($mode::$variant => $name),+
                }))
            }
        }
    )+};
}

#[cfg(feature = "clap")]
use crate::PinMode;

#[cfg(feature = "clap")]
clap_values! {
    OutputCheck { Off => "off", Warn => "warn", Enforce => "enforce" }
    InputCheck { Off => "off", Warn => "warn", Enforce => "enforce" }
    UnknownArguments { Allow => "allow", Warn => "warn", Reject => "reject" }
    OnUnchecked { Refuse => "refuse", Forward => "forward" }
    Unlisted { Refuse => "refuse", Forward => "forward" }
    PinMode { Warn => "warn", Enforce => "enforce" }
}

#[cfg(all(test, feature = "clap"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// Every variant is a value, under its own name, and reads back as itself.
    fn round_trips<T: ValueEnum + PartialEq + std::fmt::Debug>(expected: &[&str]) {
        let names: Vec<String> = T::value_variants()
            .iter()
            .map(|v| v.to_possible_value().unwrap().get_name().to_string())
            .collect();
        assert_eq!(names, expected);
        for (variant, name) in T::value_variants().iter().zip(expected) {
            assert_eq!(&T::from_str(name, false).unwrap(), variant);
        }
    }

    #[test]
    fn every_mode_is_a_value_under_its_name() {
        round_trips::<OutputCheck>(&["off", "warn", "enforce"]);
        round_trips::<InputCheck>(&["off", "warn", "enforce"]);
        round_trips::<UnknownArguments>(&["allow", "warn", "reject"]);
        round_trips::<OnUnchecked>(&["refuse", "forward"]);
        round_trips::<Unlisted>(&["refuse", "forward"]);
        round_trips::<PinMode>(&["warn", "enforce"]);
    }
}
