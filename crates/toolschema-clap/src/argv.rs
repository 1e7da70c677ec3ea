//! Tool-call arguments back to a command line, and a check with clap's own parser that the
//! command line says what the call said.
//!
//! The command line is rebuilt deterministically in schema order: flags only when their value
//! differs from what clap does without them, counts as repeated flags, values attached with `=`
//! (`--name=-x` stays a value), arrays repeated or grouped per `num_args`, and positional values
//! last, after `--`, so a value starting with `-` is never read as an option (when a command has a
//! `last(true)` positional, only that one follows `--`, as clap requires).

use crate::argument::{ArgSpec, Form, Item, Kind};
use clap::parser::ValueSource;
use clap::{ArgMatches, Command};
use serde_json::{Map, Value};

/// What clap must read back for one argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expected {
    /// A flag given (its stored value is clap's business).
    Given,
    /// These raw values, per occurrence (a count reads back as one value, the count).
    Occurrences(Vec<Vec<String>>),
}

/// A rebuilt command line: the arguments after the program name, and what clap must read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandLine {
    /// Subcommand names, then options, then `--` and positional values.
    pub(crate) args: Vec<String>,
    /// Argument id -> what clap must read back.
    pub(crate) expected: Vec<(String, Expected)>,
}

/// One value as command-line text. The arguments were validated against the schema, so a
/// mismatch here is reported, never assumed away.
fn render(item: Item, value: &Value, id: &str) -> Result<String, String> {
    let mismatch = || format!("argument '{id}' has a value the command line cannot carry");
    match (item, value) {
        (Item::Text, Value::String(s)) => Ok(s.clone()),
        (Item::Integer, Value::Number(n)) => {
            if let Some(i) = n.as_i64() {
                Ok(i.to_string())
            } else if let Some(u) = n.as_u64() {
                Ok(u.to_string())
            } else {
                // JSON Schema counts 3.0 as an integer; clap's parsers want "3". Negative zero
                // (JSON's -0, read as a float) is 0: no unsigned parser takes "-0".
                match n.as_f64() {
                    Some(f) if f.fract() == 0.0 && f.abs() < 1e19 => Ok(format!("{:.0}", f + 0.0)),
                    _ => Err(mismatch()),
                }
            }
        }
        (Item::Number, Value::Number(n)) => Ok(n.to_string()),
        (Item::Boolean, Value::Bool(b)) => Ok(b.to_string()),
        (Item::Json, value) => serde_json::to_string(value).map_err(|_| mismatch()),
        _ => Err(mismatch()),
    }
}

fn render_all(item: Item, values: &Value, id: &str) -> Result<Vec<String>, String> {
    match values {
        Value::Array(items) => items.iter().map(|v| render(item, v, id)).collect(),
        _ => Err(format!("argument '{id}' must be an array")),
    }
}

/// A value that cannot follow its flag as a separate word without being read as an option.
fn check_separate(
    spec: &ArgSpec,
    values: &[String],
    path_of: impl Fn(usize) -> String,
) -> Result<(), String> {
    for (i, value) in values.iter().enumerate() {
        let negative_number = value.parse::<f64>().is_ok();
        let readable = spec.hyphen_values || (spec.negative_numbers && negative_number);
        if value.starts_with('-') && !readable {
            return Err(format!(
                "argument '{}' cannot start with '-': the command line would read it as an option",
                path_of(i)
            ));
        }
    }
    Ok(())
}

/// Rebuild the command line for `path` (subcommand names below the root) from validated
/// arguments.
pub(crate) fn build(
    path: &[String],
    specs: &[ArgSpec],
    arguments: &Map<String, Value>,
) -> Result<CommandLine, String> {
    let mut options: Vec<String> = Vec::new();
    let mut positionals: Vec<(usize, &str, Vec<String>)> = Vec::new();
    let mut expected: Vec<(String, Expected)> = Vec::new();
    for spec in specs {
        let Some(value) = arguments.get(&spec.id).filter(|v| !v.is_null()) else {
            continue;
        };
        let id = spec.id.as_str();
        let flag = spec.form.flag();
        let attached = |v: &str| match &spec.form {
            Form::Long(long) => format!("--{long}={v}"),
            Form::Short(short) => format!("-{short}={v}"),
            Form::Positional(_) => v.to_string(),
        };
        match (spec.kind, &spec.form) {
            (Kind::Flag { given_when }, _) => {
                let Some(on) = value.as_bool() else {
                    return Err(format!("argument '{id}' must be a boolean"));
                };
                if on == given_when {
                    options.extend(flag);
                    expected.push((spec.id.clone(), Expected::Given));
                }
            }
            (Kind::Count, _) => {
                let Some(times) = value.as_u64().filter(|n| *n <= u64::from(u8::MAX)) else {
                    return Err(format!("argument '{id}' must be an integer from 0 to 255"));
                };
                if times > 0 {
                    for _ in 0..times {
                        options.extend(flag.clone());
                    }
                    expected.push((
                        spec.id.clone(),
                        Expected::Occurrences(vec![vec![times.to_string()]]),
                    ));
                }
            }
            (Kind::Single(item), Form::Positional(index)) => {
                let text = render(item, value, id)?;
                positionals.push((*index, id, vec![text.clone()]));
                expected.push((spec.id.clone(), Expected::Occurrences(vec![vec![text]])));
            }
            (Kind::Single(item), _) => {
                let text = render(item, value, id)?;
                options.push(attached(&text));
                expected.push((spec.id.clone(), Expected::Occurrences(vec![vec![text]])));
            }
            (Kind::Grouped(item), Form::Positional(index)) => {
                let values = render_all(item, value, id)?;
                if !values.is_empty() {
                    positionals.push((*index, id, values.clone()));
                    expected.push((spec.id.clone(), Expected::Occurrences(vec![values])));
                }
            }
            (Kind::Repeated(item), _) => {
                let values = render_all(item, value, id)?;
                if !values.is_empty() {
                    options.extend(values.iter().map(|v| attached(v)));
                    let occurrences = values.into_iter().map(|v| vec![v]).collect();
                    expected.push((spec.id.clone(), Expected::Occurrences(occurrences)));
                }
            }
            (Kind::Grouped(item), _) => {
                let values = render_all(item, value, id)?;
                if !values.is_empty() {
                    check_separate(spec, &values, |i| format!("{id}[{i}]"))?;
                    options.extend(flag);
                    options.extend(values.iter().cloned());
                    expected.push((spec.id.clone(), Expected::Occurrences(vec![values])));
                }
            }
            (Kind::GroupedRepeated(item), _) => {
                let Value::Array(groups) = value else {
                    return Err(format!("argument '{id}' must be an array"));
                };
                let mut occurrences = Vec::new();
                for (g, group) in groups.iter().enumerate() {
                    let values = render_all(item, group, &format!("{id}[{g}]"))?;
                    check_separate(spec, &values, |i| format!("{id}[{g}][{i}]"))?;
                    options.extend(flag.clone());
                    options.extend(values.iter().cloned());
                    occurrences.push(values);
                }
                if !occurrences.is_empty() {
                    expected.push((spec.id.clone(), Expected::Occurrences(occurrences)));
                }
            }
        }
    }
    let mut args: Vec<String> = path.to_vec();
    args.extend(options);
    if !positionals.is_empty() {
        check_positional_order(specs, &positionals)?;
        positionals.sort_by_key(|(index, _, _)| *index);
        // With a `last(true)` positional, clap reads everything after `--` as that one, so the
        // others go before `--` (where a leading `-` would make them options).
        let last_id = specs.iter().find(|s| s.last).map(|s| s.id.as_str());
        let mut after_separator: Vec<String> = Vec::new();
        for (_, id, values) in positionals {
            if last_id.is_none() || last_id == Some(id) {
                after_separator.extend(values);
                continue;
            }
            if let Some(spec) = specs.iter().find(|s| s.id == id) {
                let many = values.len() > 1;
                check_separate(spec, &values, |i| {
                    if many {
                        format!("{id}[{i}]")
                    } else {
                        id.to_string()
                    }
                })?;
            }
            args.extend(values);
        }
        if !after_separator.is_empty() {
            args.push("--".to_string());
            args.extend(after_separator);
        }
    }
    Ok(CommandLine { args, expected })
}

/// Positional values fill clap's positionals in order: one cannot be given while an earlier one
/// is left out.
fn check_positional_order(
    specs: &[ArgSpec],
    given: &[(usize, &str, Vec<String>)],
) -> Result<(), String> {
    let mut all: Vec<(usize, &str)> = specs
        .iter()
        .filter_map(|s| match s.form {
            Form::Positional(index) => Some((index, s.id.as_str())),
            _ => None,
        })
        .collect();
    all.sort_by_key(|(index, _)| *index);
    let is_given = |id: &str| given.iter().any(|(_, g, _)| *g == id);
    let mut missing: Option<&str> = None;
    for (_, id) in all {
        match (is_given(id), missing) {
            (true, Some(earlier)) => {
                return Err(format!(
                    "argument '{id}' cannot be given without '{earlier}': positional arguments \
                     are filled in order"
                ))
            }
            (false, None) => missing = Some(id),
            _ => {}
        }
    }
    Ok(())
}

/// Parse the command line with the application's own clap command and check that every argument
/// reads back exactly as given, and nothing else was read from the command line.
pub(crate) fn check(
    app: &Command,
    path: &[String],
    specs: &[ArgSpec],
    line: &CommandLine,
) -> Result<(), String> {
    let argv = std::iter::once(app.get_name().to_string()).chain(line.args.iter().cloned());
    let matches = app.clone().try_get_matches_from(argv).map_err(|e| {
        format!(
            "the command line parser refused the call: {}",
            clap_message(&e)
        )
    })?;
    let mut leaf: &ArgMatches = &matches;
    for name in path {
        leaf = match leaf.subcommand() {
            Some((sub, sub_matches)) if sub == name => sub_matches,
            _ => {
                return Err(format!(
                    "the command line did not reach the '{name}' command"
                ))
            }
        };
    }
    for (id, expected) in &line.expected {
        let from_command_line = leaf.value_source(id) == Some(ValueSource::CommandLine);
        let reads_back = from_command_line
            && match expected {
                Expected::Given => true,
                Expected::Occurrences(occurrences) => {
                    raw_occurrences(leaf, id).as_ref() == Some(occurrences)
                }
            };
        if !reads_back {
            return Err(format!(
                "argument '{id}' would not reach the command as given (the command line parser \
                 reads it differently)"
            ));
        }
    }
    for spec in specs {
        let given = line.expected.iter().any(|(id, _)| *id == spec.id);
        if !given && leaf.value_source(&spec.id) == Some(ValueSource::CommandLine) {
            return Err(format!(
                "argument '{}' would be read from the command line although it was not given",
                spec.id
            ));
        }
    }
    Ok(())
}

fn raw_occurrences(matches: &ArgMatches, id: &str) -> Option<Vec<Vec<String>>> {
    let occurrences = matches.try_get_raw_occurrences(id).ok()??;
    occurrences
        .map(|values| {
            values
                .map(|v| v.to_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
        })
        .collect()
}

/// clap's error without its `error: ` prefix, usage and help hint: what a model needs.
pub(crate) fn clap_message(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let mut lines: Vec<&str> = Vec::new();
    for line in rendered.lines() {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        lines.push(line);
    }
    let text = lines.join("\n");
    let text = text.trim();
    text.strip_prefix("error: ").unwrap_or(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::argument::{map_argument, MapContext};
    use clap::{value_parser, Arg, ArgAction};
    use serde_json::json;

    /// A root command with one subcommand `run` holding `args`, and its argument specs.
    fn setup(args: Vec<Arg>) -> (Command, Vec<ArgSpec>) {
        let mut app = Command::new("app").subcommand(Command::new("run").args(args));
        app.build();
        let leaf = app.find_subcommand("run").unwrap();
        let specs = leaf
            .get_arguments()
            .filter_map(|arg| {
                map_argument(
                    arg,
                    MapContext {
                        json_schema: None,
                        requires: Vec::new(),
                        conflicts: Vec::new(),
                    },
                )
                .unwrap()
            })
            .collect();
        (app, specs)
    }

    /// The command line for `arguments`, checked by clap.
    fn line(args: Vec<Arg>, arguments: Value) -> Result<Vec<String>, String> {
        let (app, specs) = setup(args);
        let path = vec!["run".to_string()];
        let line = build(&path, &specs, arguments.as_object().unwrap())?;
        check(&app, &path, &specs, &line)?;
        Ok(line.args)
    }

    #[test]
    fn values_starting_with_a_dash_stay_values() {
        let args = || {
            vec![
                Arg::new("name").long("name"),
                Arg::new("n").short('n'),
                Arg::new("offset")
                    .long("offset")
                    .value_parser(value_parser!(i32)),
                Arg::new("text"),
            ]
        };
        assert_eq!(
            line(
                args(),
                json!({"name": "--force", "n": "-x", "offset": -5, "text": "-rf"})
            )
            .unwrap(),
            ["run", "--name=--force", "-n=-x", "--offset=-5", "--", "-rf"]
        );
        assert_eq!(
            line(args(), json!({"name": "", "n": "=y", "text": "--"})).unwrap(),
            ["run", "--name=", "-n==y", "--", "--"]
        );
    }

    #[test]
    fn booleans_appear_only_when_they_differ_from_the_default() {
        let args = || {
            vec![
                Arg::new("shout").long("shout").action(ArgAction::SetTrue),
                Arg::new("color")
                    .long("no-color")
                    .action(ArgAction::SetFalse),
                Arg::new("cache")
                    .long("cache")
                    .value_parser(value_parser!(bool)),
            ]
        };
        assert_eq!(
            line(args(), json!({"shout": true, "color": false})).unwrap(),
            ["run", "--shout", "--no-color"]
        );
        assert_eq!(
            line(args(), json!({"shout": false, "color": true})).unwrap(),
            ["run"]
        );
        assert_eq!(
            line(args(), json!({"cache": false})).unwrap(),
            ["run", "--cache=false"]
        );
    }

    #[test]
    fn counts_repeat_the_flag() {
        let args = || {
            vec![
                Arg::new("verbose").short('v').action(ArgAction::Count),
                Arg::new("quiet").long("quiet").action(ArgAction::Count),
            ]
        };
        assert_eq!(
            line(args(), json!({"verbose": 3, "quiet": 1})).unwrap(),
            ["run", "-v", "-v", "-v", "--quiet"]
        );
        assert_eq!(line(args(), json!({"verbose": 0})).unwrap(), ["run"]);
    }

    #[test]
    fn arrays_repeat_or_group_per_num_args() {
        let args = || {
            vec![
                Arg::new("tag").long("tag").action(ArgAction::Append),
                Arg::new("files").long("files").num_args(1..),
                Arg::new("point")
                    .long("point")
                    .num_args(2)
                    .action(ArgAction::Append)
                    .value_parser(value_parser!(i32))
                    .allow_negative_numbers(true),
                Arg::new("paths").num_args(1..),
            ]
        };
        assert_eq!(
            line(
                args(),
                json!({
                    "tag": ["a", "-b"],
                    "files": ["x", "y"],
                    "point": [[1, 2], [-3, 4]],
                    "paths": ["-p", "q"]
                })
            )
            .unwrap(),
            [
                "run", "--tag=a", "--tag=-b", "--files", "x", "y", "--point", "1", "2", "--point",
                "-3", "4", "--", "-p", "q"
            ]
        );
        assert_eq!(
            line(args(), json!({"tag": [], "paths": []})).unwrap(),
            ["run"]
        );
        assert_eq!(
            line(args(), json!({"files": ["ok", "-x"]})).unwrap_err(),
            "argument 'files[1]' cannot start with '-': the command line would read it as an option"
        );
    }

    #[test]
    fn numbers_and_json_values() {
        let args = || {
            vec![
                Arg::new("n").long("n").value_parser(value_parser!(u64)),
                Arg::new("ratio")
                    .long("ratio")
                    .value_parser(value_parser!(f64)),
            ]
        };
        assert_eq!(
            line(args(), json!({"n": 3.0, "ratio": 0.25})).unwrap(),
            ["run", "--n=3", "--ratio=0.25"]
        );
        let negative_zero: Value = serde_json::from_str(r#"{"n": -0, "ratio": -0.0}"#).unwrap();
        assert_eq!(
            line(args(), negative_zero).unwrap(),
            ["run", "--n=0", "--ratio=-0.0"]
        );
        assert_eq!(
            line(args(), json!({"n": u64::MAX})).unwrap(),
            ["run", format!("--n={}", u64::MAX).as_str()]
        );
        assert_eq!(
            render(Item::Json, &json!({"a": [1, "x"]}), "v").unwrap(),
            r#"{"a":[1,"x"]}"#
        );
    }

    #[test]
    fn a_last_positional_alone_follows_the_separator() {
        let args = || {
            vec![
                Arg::new("first").required(true),
                Arg::new("rest")
                    .num_args(0..)
                    .last(true)
                    .allow_hyphen_values(true),
            ]
        };
        assert_eq!(
            line(args(), json!({"first": "f", "rest": ["r1", "-r2"]})).unwrap(),
            ["run", "f", "--", "r1", "-r2"]
        );
        assert_eq!(line(args(), json!({"first": "f"})).unwrap(), ["run", "f"]);
        assert_eq!(
            line(args(), json!({"first": "-f"})).unwrap_err(),
            "argument 'first' cannot start with '-': the command line would read it as an option"
        );
    }

    #[test]
    fn positionals_fill_in_order() {
        let args = || vec![Arg::new("key"), Arg::new("value")];
        assert_eq!(
            line(args(), json!({"value": "v", "key": "k"})).unwrap(),
            ["run", "--", "k", "v"]
        );
        assert_eq!(
            line(args(), json!({"value": "v"})).unwrap_err(),
            "argument 'value' cannot be given without 'key': positional arguments are filled in order"
        );
    }

    #[test]
    fn clap_refuses_what_the_schema_cannot_say() {
        let args = || {
            vec![
                Arg::new("user").long("user").requires("password"),
                Arg::new("password").long("password"),
                Arg::new("anonymous")
                    .long("anonymous")
                    .action(ArgAction::SetTrue)
                    .conflicts_with("user"),
            ]
        };
        assert_eq!(
            line(args(), json!({"user": "u", "anonymous": true})).unwrap_err(),
            "the command line parser refused the call: the argument '--user <user>' cannot be \
             used with '--anonymous'"
        );
        assert_eq!(
            line(args(), json!({"user": "u"})).unwrap_err(),
            "the command line parser refused the call: the following required arguments were \
             not provided:\n  --password <password>"
        );
    }

    #[test]
    fn values_clap_would_split_are_refused() {
        let args = || vec![Arg::new("ids").long("ids").value_delimiter(',')];
        assert_eq!(
            line(args(), json!({"ids": "a,b"})).unwrap_err(),
            "argument 'ids' would not reach the command as given (the command line parser reads \
             it differently)"
        );
    }
}
