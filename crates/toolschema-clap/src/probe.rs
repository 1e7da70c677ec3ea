//! What clap knows but does not show: the bounds of an integer value parser, whether a parser
//! refuses the empty string, and which arguments an argument requires.
//!
//! clap keeps a `.range()` and `requires` private. Rather than read its `Debug` output, whose
//! format may change in any release, these are found by asking clap's own parser, whose accept or
//! reject behaviour is its public contract: a one-argument command parses candidate values, and a
//! copy of the command's arguments reports what is missing when one of them is given.

use clap::builder::ValueParser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, Command};

/// Asks one value parser, through clap, which values it accepts.
pub(crate) struct ValueProbe {
    command: Command,
}

impl ValueProbe {
    /// A probe for the parser of `arg`.
    pub(crate) fn new(parser: &ValueParser) -> Self {
        let mut command = Command::new("probe")
            .no_binary_name(true)
            .disable_help_flag(true)
            .disable_version_flag(true)
            .arg(
                Arg::new("value")
                    .value_parser(parser.clone())
                    .action(ArgAction::Set)
                    .num_args(1)
                    .allow_hyphen_values(true)
                    .required(true),
            );
        command.build();
        ValueProbe { command }
    }

    /// Whether the parser accepts `value`.
    pub(crate) fn accepts(&mut self, value: &str) -> bool {
        self.command.try_get_matches_from_mut([value]).is_ok()
    }

    /// The smallest and largest integers the parser accepts, searched within the type's bounds,
    /// when the accepted integers form one interval; `None` when no seed is accepted or the
    /// accepted values have gaps (then only the type's bounds are known).
    pub(crate) fn integer_bounds(
        &mut self,
        type_min: i128,
        type_max: i128,
        seeds: &[i128],
    ) -> Option<(i128, i128)> {
        let candidates = seeds.iter().copied().chain([0, 1, -1, type_min, type_max]);
        let mut seed = None;
        for candidate in candidates.filter(|c| (type_min..=type_max).contains(c)) {
            if self.accepts_integer(candidate) {
                seed = Some(candidate);
                break;
            }
        }
        let seed = seed?;
        let low = if self.accepts_integer(type_min) {
            type_min
        } else {
            self.boundary(type_min, seed)
        };
        let high = if self.accepts_integer(type_max) {
            type_max
        } else {
            self.boundary(type_max, seed)
        };
        // A parser with gaps (only even numbers, say) would make the search stop at a gap: check
        // a spread of values outside the interval and inside it.
        let outside = [
            low - 2,
            low - 10,
            low.saturating_mul(2) - 1,
            type_min,
            high + 2,
            high + 10,
            high.saturating_mul(2) + 1,
            type_max,
        ];
        let inside = [low, high, low + (high - low) / 2, low + 1, high - 1];
        let gaps = outside
            .iter()
            .filter(|v| (type_min..=type_max).contains(*v) && !(low..=high).contains(*v))
            .any(|v| self.accepts_integer(*v))
            || inside
                .iter()
                .filter(|v| (low..=high).contains(*v))
                .any(|v| !self.accepts_integer(*v));
        (!gaps).then_some((low, high))
    }

    /// Between a refused and an accepted value (in either order), the accepted value next to
    /// the last refused one, by bisection.
    fn boundary(&mut self, mut refused: i128, mut accepted: i128) -> i128 {
        while (accepted - refused).abs() > 1 {
            let mid = refused + (accepted - refused) / 2;
            if self.accepts_integer(mid) {
                accepted = mid;
            } else {
                refused = mid;
            }
        }
        accepted
    }

    fn accepts_integer(&mut self, value: i128) -> bool {
        self.accepts(&value.to_string())
    }
}

/// What giving one argument alone makes clap ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Requirement {
    /// This argument (by id).
    Argument(String),
    /// One of these arguments (a group).
    OneOf(Vec<String>),
}

/// Finds the unconditional `requires` of every argument of a command.
///
/// The arguments are copied into a probe command in which none is required, each is an option
/// named `--tsc-probe-N` taking any string, and every other relation (requires, conflicts,
/// groups) is kept; giving one argument alone then fails with exactly what it requires.
pub(crate) struct RequiresProbe {
    command: Command,
    ids: Vec<String>,
    baseline: Vec<Requirement>,
}

impl RequiresProbe {
    /// A probe for the arguments of `leaf` (a built command).
    pub(crate) fn new(leaf: &Command) -> Self {
        let mut ids = Vec::new();
        let mut command = Command::new("probe")
            .no_binary_name(true)
            .disable_help_flag(true)
            .disable_version_flag(true);
        for arg in leaf.get_arguments() {
            let takes_values = match arg.get_action() {
                ArgAction::Set | ArgAction::Append => true,
                ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count => false,
                _ => continue, // help and version end parsing; they require nothing
            };
            let long = format!("tsc-probe-{}", ids.len());
            let mut copy = arg
                .clone()
                .index(None)
                .short(None)
                .long(long)
                .required(false)
                .global(false)
                .hide(false)
                .env(None)
                .default_value(None)
                .last(false)
                .trailing_var_arg(false)
                .exclusive(false);
            if takes_values {
                copy = copy
                    .value_parser(clap::builder::NonEmptyStringValueParser::new())
                    .num_args(1)
                    .value_name("V")
                    .value_delimiter(None)
                    .require_equals(false)
                    .allow_hyphen_values(false)
                    .action(ArgAction::Append);
            }
            ids.push(arg.get_id().to_string());
            command = command.arg(copy);
        }
        for group in leaf.get_groups() {
            command = command.group(group.clone().required(false));
        }
        command.build();
        let mut probe = RequiresProbe {
            command,
            ids,
            baseline: Vec::new(),
        };
        probe.baseline = probe.missing_when(None);
        probe
    }

    /// What `id` requires when given alone (conditional requirements are not included).
    pub(crate) fn requirements_of(&mut self, id: &str) -> Vec<Requirement> {
        let Some(index) = self.ids.iter().position(|i| i == id) else {
            return Vec::new();
        };
        let mut found = self.missing_when(Some(index));
        found.retain(|r| !self.baseline.contains(r));
        found
    }

    fn missing_when(&mut self, given: Option<usize>) -> Vec<Requirement> {
        let argv: Vec<String> = match given {
            None => Vec::new(),
            Some(index) => {
                let arg = self
                    .command
                    .get_arguments()
                    .find(|a| a.get_long() == Some(&format!("tsc-probe-{index}")));
                let takes_values = arg.is_some_and(|a| matches!(a.get_action(), ArgAction::Append));
                let flag = format!("--tsc-probe-{index}");
                if takes_values {
                    vec![format!("{flag}=x")]
                } else {
                    vec![flag]
                }
            }
        };
        let Err(error) = self.command.try_get_matches_from_mut(argv) else {
            return Vec::new();
        };
        if error.kind() != ErrorKind::MissingRequiredArgument {
            return Vec::new();
        }
        let Some(ContextValue::Strings(missing)) = error.get(ContextKind::InvalidArg) else {
            return Vec::new();
        };
        missing
            .iter()
            .filter_map(|rendered| {
                let members: Vec<String> = probe_indices(rendered)
                    .into_iter()
                    .filter_map(|i| self.ids.get(i).cloned())
                    .collect();
                match members.len() {
                    0 => None,
                    1 if !rendered.contains('|') => {
                        members.into_iter().next().map(Requirement::Argument)
                    }
                    _ => Some(Requirement::OneOf(members)),
                }
            })
            .collect()
    }
}

/// The N of every `--tsc-probe-N` in a rendered argument or group.
fn probe_indices(rendered: &str) -> Vec<usize> {
    rendered
        .split("--tsc-probe-")
        .skip(1)
        .filter_map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::value_parser;

    #[test]
    fn finds_the_bounds_of_a_range() {
        let parser: ValueParser = value_parser!(u8).range(1..=10).into();
        let mut probe = ValueProbe::new(&parser);
        assert_eq!(probe.integer_bounds(0, 255, &[]), Some((1, 10)));
        let parser: ValueParser = value_parser!(i64).range(-5..100).into();
        let mut probe = ValueProbe::new(&parser);
        assert_eq!(
            probe.integer_bounds(i64::MIN.into(), i64::MAX.into(), &[]),
            Some((-5, 99))
        );
        let parser: ValueParser = value_parser!(u64).into();
        let mut probe = ValueProbe::new(&parser);
        assert_eq!(
            probe.integer_bounds(0, u64::MAX.into(), &[]),
            Some((0, u64::MAX.into()))
        );
        let parser: ValueParser = value_parser!(u64).range(1000..).into();
        let mut probe = ValueProbe::new(&parser);
        assert_eq!(
            probe.integer_bounds(0, u64::MAX.into(), &[]),
            Some((1000, u64::MAX.into()))
        );
    }

    #[test]
    fn refuses_bounds_for_parsers_with_gaps() {
        fn even(s: &str) -> Result<u8, String> {
            let n: u8 = s.parse().map_err(|_| "not a number".to_string())?;
            if n.is_multiple_of(2) {
                Ok(n)
            } else {
                Err("odd".into())
            }
        }
        let parser = ValueParser::new(even);
        let mut probe = ValueProbe::new(&parser);
        assert_eq!(probe.integer_bounds(0, 255, &[]), None);
    }

    #[test]
    fn knows_which_parsers_refuse_the_empty_string() {
        let empty_refused = |parser: ValueParser| !ValueProbe::new(&parser).accepts("");
        assert!(empty_refused(
            clap::builder::NonEmptyStringValueParser::new().into()
        ));
        assert!(empty_refused(value_parser!(std::path::PathBuf)));
        assert!(!empty_refused(value_parser!(String)));
    }

    #[test]
    fn copes_with_every_kind_of_argument() {
        let mut leaf = Command::new("leaf")
            .arg(
                Arg::new("point")
                    .long("point")
                    .num_args(2)
                    .value_names(["X", "Y"])
                    .action(ArgAction::Append)
                    .requires("name"),
            )
            .arg(
                Arg::new("files")
                    .long("files")
                    .num_args(1..)
                    .require_equals(true)
                    .value_delimiter(',')
                    .value_hint(clap::ValueHint::FilePath),
            )
            .arg(
                Arg::new("name")
                    .short('n')
                    .env("LEAF_NAME")
                    .default_value("x"),
            )
            .arg(Arg::new("first").required(true))
            .arg(
                Arg::new("rest")
                    .num_args(0..)
                    .last(true)
                    .allow_hyphen_values(true),
            )
            .arg(
                Arg::new("only")
                    .long("only")
                    .action(ArgAction::SetTrue)
                    .exclusive(true),
            );
        leaf.build();
        let mut probe = RequiresProbe::new(&leaf);
        assert_eq!(
            probe.requirements_of("point"),
            [Requirement::Argument("name".into())]
        );
        for id in ["files", "name", "rest", "first", "only"] {
            assert_eq!(probe.requirements_of(id), [], "{id}");
        }
    }

    #[test]
    fn finds_requirements() {
        let mut leaf = Command::new("leaf")
            .arg(Arg::new("key").required(true))
            .arg(Arg::new("user").long("user").requires("password"))
            .arg(Arg::new("password").long("password"))
            .arg(
                Arg::new("fancy")
                    .long("fancy")
                    .action(ArgAction::SetTrue)
                    .requires("output"),
            )
            .arg(Arg::new("json").long("json").action(ArgAction::SetTrue))
            .arg(Arg::new("yaml").long("yaml").action(ArgAction::SetTrue))
            .group(clap::ArgGroup::new("output").args(["json", "yaml"]));
        leaf.build();
        let mut probe = RequiresProbe::new(&leaf);
        assert_eq!(
            probe.requirements_of("user"),
            [Requirement::Argument("password".into())]
        );
        assert_eq!(probe.requirements_of("password"), []);
        assert_eq!(probe.requirements_of("key"), []);
        assert_eq!(
            probe.requirements_of("fancy"),
            [Requirement::OneOf(vec!["json".into(), "yaml".into()])]
        );
    }
}
