//! A clap command tree as MCP tools: one tool per runnable leaf command, named by its path, with
//! an input schema from its arguments, checked by the core validator before anything runs.

use crate::argument::{map_argument, ArgSpec, Kind, MapContext};
use crate::argv;
use crate::config::{path_is_under, Config};
use crate::probe::{Requirement, RequiresProbe};
use clap::{Arg, Command};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::time::Duration;
use toolschema::{CompileOptions, CompiledTool, Dialect, Tool, ValidationErrors};

/// Command names that are never tools, at any depth.
const NEVER_TOOLS: [&str; 2] = ["help", "completion"];
/// The name of the subcommand this crate adds.
pub(crate) const MCP_COMMAND: &str = "mcp";

/// Why an application's commands cannot be served as tools. Reported at start-up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// A command's tool name breaks the MCP name rules.
    #[error("command '{command}': tool name '{name}' is not valid: {reason}")]
    Name {
        /// The command path.
        command: String,
        /// The tool name.
        name: String,
        /// The rule it breaks.
        reason: String,
    },
    /// Two commands would become tools of the same name.
    #[error("commands '{first}' and '{second}' would both be the tool '{name}'")]
    Collision {
        /// The tool name.
        name: String,
        /// One command path.
        first: String,
        /// The other.
        second: String,
    },
    /// A configured command path names no command.
    #[error("{setting}: no command '{path}'{suggestion}")]
    UnknownCommand {
        /// The configuration setting.
        setting: &'static str,
        /// The path given.
        path: String,
        /// ` (did you mean '...'?)` or empty.
        suggestion: String,
    },
    /// A configured flag names no argument.
    #[error("{setting}: no command has a flag '{name}'{suggestion}")]
    UnknownFlag {
        /// The configuration setting.
        setting: &'static str,
        /// The name given.
        name: String,
        /// ` (did you mean '...'?)` or empty.
        suggestion: String,
    },
    /// A required argument would be left out of a tool.
    #[error("command '{command}': argument '{argument}' is required, so it cannot be left out by {setting}")]
    RequiredLeftOut {
        /// The command path.
        command: String,
        /// The argument id.
        argument: String,
        /// The setting that leaves it out.
        setting: &'static str,
    },
    /// `argument_schema` names something it cannot apply to.
    #[error("argument_schema for '{argument}' of '{command}': {reason}")]
    ArgumentSchema {
        /// The command path.
        command: String,
        /// The argument id.
        argument: String,
        /// Why not.
        reason: String,
    },
    /// `require_scope` names something that is not an OAuth scope.
    #[error("require_scope for '{path}': {reason}")]
    Scope {
        /// The command path.
        path: String,
        /// Why not.
        reason: String,
    },
    /// A tool's schemas do not compile (an `argument_schema` that is not valid JSON Schema).
    #[error("command '{command}': {reason}")]
    Schema {
        /// The command path.
        command: String,
        /// What the core says.
        reason: String,
    },
}

/// One command served as a tool.
#[derive(Debug)]
pub struct ClapTool {
    tool: Tool,
    compiled: CompiledTool,
    path: Vec<String>,
    args: Vec<ArgSpec>,
}

impl ClapTool {
    /// The tool's name.
    pub fn name(&self) -> &str {
        self.tool.name()
    }

    /// The tool definition, exactly as `tools/list` carries it.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// The subcommand names below the root that this tool runs.
    pub fn command_path(&self) -> &[String] {
        &self.path
    }
}

/// Why a call does not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No tool has this name.
    #[error("unknown tool '{name}'{suggestion}")]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// ` (did you mean '...'?)` or empty.
        suggestion: String,
    },
    /// The arguments do not fit the input schema: the core validator's messages, one per line.
    #[error("{0}")]
    Invalid(ValidationErrors),
    /// The arguments fit the schema but the command line refuses them (a conflict, a custom
    /// parser, a value clap would read differently).
    #[error("{0}")]
    Refused(String),
}

/// A call ready to run: the arguments for the executable, after its program name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The command line after the program name.
    pub args: Vec<String>,
}

/// An application's commands as MCP tools.
#[derive(Debug)]
pub struct ToolSet {
    app: Command,
    tools: Vec<ClapTool>,
    by_name: HashMap<String, usize>,
    /// What every tool name starts with (`PREFIX_`), or empty.
    name_prefix: String,
    pub(crate) env_defaults: Vec<(String, String)>,
    pub(crate) timeout: Duration,
    pub(crate) output_limit: usize,
    scopes: Vec<(String, String)>,
}

/// The output schema every tool shares: what the command printed and how it exited.
pub fn output_schema() -> Map<String, Value> {
    let schema = json!({
        "type": "object",
        "properties": {
            "stdout": {"type": "string", "description": "What the command wrote to standard output."},
            "stderr": {"type": "string", "description": "What the command wrote to standard error."},
            "exitCode": {"type": "integer", "description": "The exit code; 128 + N when killed by signal N."}
        },
        "required": ["stdout", "stderr", "exitCode"],
        "additionalProperties": false
    });
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn suggestion<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    toolschema::suggest::closest(name, candidates)
        .map(|c| format!(" (did you mean '{c}'?)"))
        .unwrap_or_default()
}

/// Every command below the root (path, command), depth first in declaration order, leaving out
/// `help`, `completion`, and the root's `mcp`.
fn walk<'a>(cmd: &'a Command, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, &'a Command)>) {
    for sub in cmd.get_subcommands() {
        let name = sub.get_name();
        if NEVER_TOOLS.contains(&name) || (path.is_empty() && name == MCP_COMMAND) {
            continue;
        }
        path.push(name.to_string());
        out.push((path.clone(), sub));
        walk(sub, path, out);
        path.pop();
    }
}

/// Whether a command runs by itself: it has no subcommands but `help`.
fn is_leaf(cmd: &Command) -> bool {
    cmd.get_subcommands().all(|s| s.get_name() == "help")
}

/// Whether a command or one of its ancestors is hidden.
fn hidden_on_path(app: &Command, path: &[String]) -> bool {
    let mut cmd = app;
    for name in path {
        match cmd.find_subcommand(name) {
            Some(sub) if sub.is_hide_set() => return true,
            Some(sub) => cmd = sub,
            None => return true,
        }
    }
    false
}

fn flag_matches(arg: &Arg, name: &str) -> bool {
    arg.get_id() == name || arg.get_long() == Some(name)
}

impl ToolSet {
    /// The tools of `app` (the application's whole command, with or without the `mcp`
    /// subcommand) under `config`. Every mistake in the configuration or in the names is an
    /// error here, before anything is served.
    pub fn new(app: &Command, config: &Config) -> Result<ToolSet, BuildError> {
        let mut app = app.clone();
        app.build();
        let root_name = app.get_name().to_string();
        let prefix = config.prefix.clone().unwrap_or_else(|| root_name.clone());
        let mut commands = Vec::new();
        walk(&app, &mut Vec::new(), &mut commands);
        if commands.is_empty() {
            // An application without subcommands (but `mcp`) is itself the one tool.
            commands.push((Vec::new(), &app));
        }
        let paths: Vec<String> = commands.iter().map(|(p, _)| p.join(" ")).collect();
        let check_path = |setting: &'static str, path: &String| {
            if path.is_empty() || paths.contains(path) {
                Ok(())
            } else {
                Err(BuildError::UnknownCommand {
                    setting,
                    path: path.clone(),
                    suggestion: suggestion(path, paths.iter().map(String::as_str)),
                })
            }
        };
        for path in &config.allowed_commands {
            check_path("allow_command", path)?;
        }
        for path in &config.denied_commands {
            check_path("deny_command", path)?;
        }
        for (path, _) in &config.annotations {
            check_path("annotate", path)?;
        }
        for (path, scope) in &config.scopes {
            check_path("require_scope", path)?;
            toolschema_http::scopes::check_scope(scope).map_err(|reason| BuildError::Scope {
                path: path.clone(),
                reason,
            })?;
        }
        let all_args: Vec<&Arg> = commands
            .iter()
            .flat_map(|(_, c)| c.get_arguments())
            .collect();
        let flag_names: Vec<&str> = all_args
            .iter()
            .filter(|a| !a.is_positional())
            .flat_map(|a| [Some(a.get_id().as_str()), a.get_long()])
            .flatten()
            .collect();
        for (setting, names) in [
            ("allow_flag", &config.allowed_flags),
            ("deny_flag", &config.denied_flags),
        ] {
            for name in names {
                if !flag_names.contains(&name.as_str()) {
                    return Err(BuildError::UnknownFlag {
                        setting,
                        name: name.clone(),
                        suggestion: suggestion(name, flag_names.iter().copied()),
                    });
                }
            }
        }

        let mut tools: Vec<ClapTool> = Vec::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        let mut schema_targets_used = vec![false; config.argument_schemas.len()];
        for (path, cmd) in &commands {
            if !(path.is_empty() || is_leaf(cmd)) || hidden_on_path(&app, path) {
                continue;
            }
            if !config.allowed_commands.is_empty()
                && !config
                    .allowed_commands
                    .iter()
                    .any(|p| path_is_under(path, p))
            {
                continue;
            }
            if config
                .denied_commands
                .iter()
                .any(|p| path_is_under(path, p))
            {
                continue;
            }
            let tool = build_tool(
                &root_name,
                &prefix,
                path,
                cmd,
                config,
                &mut schema_targets_used,
            )?;
            if let Some(&other) = by_name.get(tool.name()) {
                return Err(BuildError::Collision {
                    name: tool.name().to_string(),
                    first: display_path(&root_name, &tools[other].path),
                    second: display_path(&root_name, path),
                });
            }
            by_name.insert(tool.name().to_string(), tools.len());
            tools.push(tool);
        }
        for (used, target) in schema_targets_used.iter().zip(&config.argument_schemas) {
            if !used {
                return Err(BuildError::ArgumentSchema {
                    command: target.command.clone(),
                    argument: target.argument.clone(),
                    reason: if paths.contains(&target.command) {
                        "the command is not served as a tool".to_string()
                    } else {
                        format!(
                            "no such command{}",
                            suggestion(&target.command, paths.iter().map(String::as_str))
                        )
                    },
                });
            }
        }
        let name_prefix = if prefix.is_empty() {
            String::new()
        } else {
            format!("{prefix}_")
        };
        Ok(ToolSet {
            app,
            tools,
            by_name,
            name_prefix,
            env_defaults: config.env_defaults.clone(),
            timeout: config.timeout,
            output_limit: config.output_limit,
            scopes: config.scopes.clone(),
        })
    }

    /// The scopes each tool needs over HTTP with authentication ([`Config::require_scope`]),
    /// by exact tool name.
    pub fn tool_scopes(&self) -> toolschema_http::ToolScopes {
        let mut scopes = toolschema_http::ToolScopes::new();
        for tool in &self.tools {
            for (path, scope) in &self.scopes {
                if path_is_under(&tool.path, path) {
                    // Tool names never hold `*` or `?` (MCP's name rules), so each is its own glob.
                    scopes = scopes.require(tool.name(), scope.clone());
                }
            }
        }
        scopes
    }

    /// The tools, in command-tree order.
    pub fn tools(&self) -> &[ClapTool] {
        &self.tools
    }

    /// The tool of this name.
    pub fn get(&self, name: &str) -> Option<&ClapTool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// `{"tools": [...]}`: exactly what `tools/list` returns.
    pub fn list(&self) -> Value {
        json!({"tools": self.tools.iter().map(|t| t.tool.to_value()).collect::<Vec<_>>()})
    }

    /// ` (did you mean '...'?)` for an unknown tool name. The prefix every name shares is left
    /// out of the comparison, or it would make every name look alike.
    fn suggest_tool(&self, name: &str) -> String {
        let strip = |n: &'_ str| -> String {
            n.strip_prefix(self.name_prefix.as_str())
                .unwrap_or(n)
                .to_string()
        };
        let short: Vec<String> = self.tools.iter().map(|t| strip(t.name())).collect();
        let Some(closest) =
            toolschema::suggest::closest(&strip(name), short.iter().map(String::as_str))
        else {
            return String::new();
        };
        let index = short.iter().position(|s| s == closest).unwrap_or(0);
        format!(" (did you mean '{}'?)", self.tools[index].name())
    }

    /// Check a call and rebuild its command line: the arguments are validated against the input
    /// schema, the command line is rebuilt and parsed by the application's own clap command, and
    /// must read back exactly as given. Nothing runs here.
    pub fn prepare(&self, name: &str, arguments: &Value) -> Result<Invocation, CallError> {
        let Some(tool) = self.get(name) else {
            return Err(CallError::UnknownTool {
                name: name.to_string(),
                suggestion: self.suggest_tool(name),
            });
        };
        tool.compiled
            .validate_input(arguments)
            .map_err(CallError::Invalid)?;
        let empty = Map::new();
        let object = arguments.as_object().unwrap_or(&empty);
        let line = argv::build(&tool.path, &tool.args, object).map_err(CallError::Refused)?;
        argv::check(&self.app, &tool.path, &tool.args, &line).map_err(CallError::Refused)?;
        Ok(Invocation { args: line.args })
    }
}

fn display_path(root_name: &str, path: &[String]) -> String {
    std::iter::once(root_name)
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tool's description: the long about, else the about, else a sentence naming the command;
/// then the text after the help, where examples live.
fn describe(root_name: &str, path: &[String], cmd: &Command) -> String {
    let about = cmd
        .get_long_about()
        .or(cmd.get_about())
        .map(|s| s.to_string().trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("Execute the {} command", display_path(root_name, path)));
    let after = cmd
        .get_after_long_help()
        .or(cmd.get_after_help())
        .map(|s| s.to_string().trim().to_string())
        .filter(|s| !s.is_empty());
    match after {
        Some(after) => format!("{about}\n\n{after}"),
        None => about,
    }
}

fn build_tool(
    root_name: &str,
    prefix: &str,
    path: &[String],
    cmd: &Command,
    config: &Config,
    schema_targets_used: &mut [bool],
) -> Result<ClapTool, BuildError> {
    let joined = path.join(" ");
    let command = display_path(root_name, path);
    let name = std::iter::once(prefix)
        .filter(|p| !p.is_empty())
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("_");
    let mut requires = RequiresProbe::new(cmd);
    // clap checks conflicts both ways; a schema reader should see them on both sides.
    let mut conflicts: HashMap<String, Vec<String>> = HashMap::new();
    for arg in cmd.get_arguments() {
        for other in cmd.get_arg_conflicts_with(arg) {
            let (a, b) = (arg.get_id().to_string(), other.get_id().to_string());
            for (from, to) in [(&a, &b), (&b, &a)] {
                let list = conflicts.entry(from.clone()).or_default();
                if !list.contains(to) {
                    list.push(to.clone());
                }
            }
        }
    }
    let mut specs: Vec<ArgSpec> = Vec::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        let left_out = if arg.is_hide_set() {
            Some("being hidden")
        } else if !arg.is_positional() && config.denied_flags.iter().any(|n| flag_matches(arg, n)) {
            Some("deny_flag")
        } else if !arg.is_positional()
            && !config.allowed_flags.is_empty()
            && !config.allowed_flags.iter().any(|n| flag_matches(arg, n))
        {
            Some("allow_flag")
        } else {
            None
        };
        let is_call_argument = !matches!(
            arg.get_action(),
            clap::ArgAction::Help
                | clap::ArgAction::HelpShort
                | clap::ArgAction::HelpLong
                | clap::ArgAction::Version
        );
        if let Some(setting) = left_out {
            if arg.is_required_set() && is_call_argument {
                return Err(BuildError::RequiredLeftOut {
                    command,
                    argument: id.to_string(),
                    setting,
                });
            }
            continue;
        }
        let target = config
            .argument_schemas
            .iter()
            .position(|s| s.command == joined && s.argument == id);
        if let Some(i) = target {
            schema_targets_used[i] = true;
        }
        let context = MapContext {
            json_schema: target.map(|i| &config.argument_schemas[i].schema),
            requires: requires.requirements_of(id),
            conflicts: conflicts.remove(id).unwrap_or_default(),
        };
        match map_argument(arg, context) {
            Ok(Some(spec)) => specs.push(spec),
            Ok(None) => {}
            Err(_) => {
                return Err(BuildError::ArgumentSchema {
                    command: joined,
                    argument: id.to_string(),
                    reason: "only an argument that takes one string value can take a JSON Schema"
                        .to_string(),
                })
            }
        }
    }
    for (i, target) in config.argument_schemas.iter().enumerate() {
        if target.command == joined && !schema_targets_used[i] {
            let ids: Vec<&str> = cmd.get_arguments().map(|a| a.get_id().as_str()).collect();
            return Err(BuildError::ArgumentSchema {
                command: joined,
                argument: target.argument.clone(),
                reason: format!(
                    "the command has no such argument{}",
                    suggestion(&target.argument, ids)
                ),
            });
        }
    }

    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut dependent_required = Map::new();
    for spec in &specs {
        properties.insert(spec.id.clone(), Value::Object(spec.schema.clone()));
        if spec.required {
            required.push(Value::String(spec.id.clone()));
        }
        // Only a single value is given exactly when its property is present; a `false` flag or
        // an empty array is present but gives nothing.
        if matches!(spec.kind, Kind::Single(_)) {
            let needed: Vec<Value> = spec
                .requires
                .iter()
                .filter_map(|r| match r {
                    Requirement::Argument(id) if specs.iter().any(|s| s.id == *id) => {
                        Some(Value::String(id.clone()))
                    }
                    _ => None,
                })
                .collect();
            if !needed.is_empty() {
                dependent_required.insert(spec.id.clone(), Value::Array(needed));
            }
        }
    }
    let mut input = Map::new();
    input.insert("type".into(), json!("object"));
    input.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        input.insert("required".into(), Value::Array(required));
    }
    if !dependent_required.is_empty() {
        input.insert(
            "dependentRequired".into(),
            Value::Object(dependent_required),
        );
    }
    input.insert("additionalProperties".into(), json!(false));

    let mut fields = Map::new();
    fields.insert("name".into(), Value::String(name.clone()));
    fields.insert(
        "description".into(),
        Value::String(describe(root_name, path, cmd)),
    );
    fields.insert("inputSchema".into(), Value::Object(input));
    fields.insert("outputSchema".into(), Value::Object(output_schema()));
    // The most specific annotation wins.
    let annotations = config
        .annotations
        .iter()
        .filter(|(p, _)| path_is_under(path, p))
        .max_by_key(|(p, _)| p.split(' ').filter(|s| !s.is_empty()).count());
    if let Some((_, annotations)) = annotations {
        fields.insert("annotations".into(), annotations.to_value());
    }
    let tool = Tool::from_map(fields).map_err(|e| BuildError::Name {
        command: command.clone(),
        name: name.clone(),
        reason: e.to_string(),
    })?;
    let compiled = tool
        .compile_with(&CompileOptions::new().dialect(Dialect::Draft202012))
        .map_err(|e| BuildError::Schema {
            command: command.clone(),
            reason: e.to_string(),
        })?;
    Ok(ClapTool {
        tool,
        compiled,
        path: path.to_vec(),
        args: specs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{value_parser, ArgAction};
    use toolschema::ToolAnnotations;

    fn app() -> Command {
        Command::new("kube")
            .arg(
                Arg::new("verbose")
                    .long("verbose")
                    .short('v')
                    .global(true)
                    .action(ArgAction::Count),
            )
            .subcommand(
                Command::new("get")
                    .about("Read things")
                    .subcommand(
                        Command::new("pods")
                            .about("List pods")
                            .long_about("List the pods of a namespace")
                            .after_help("Examples:\n  kube get pods --namespace web")
                            .arg(Arg::new("namespace").long("namespace").required(true))
                            .arg(
                                Arg::new("user")
                                    .long("user")
                                    .requires("password")
                                    .conflicts_with("anonymous"),
                            )
                            .arg(Arg::new("password").long("password"))
                            .arg(
                                Arg::new("anonymous")
                                    .long("anonymous")
                                    .action(ArgAction::SetTrue),
                            )
                            .arg(Arg::new("debug-dump").long("debug-dump").hide(true)),
                    )
                    .subcommand(Command::new("nodes")),
            )
            .subcommand(
                Command::new("delete").arg(
                    Arg::new("count")
                        .long("count")
                        .value_parser(value_parser!(u8).range(1..=5)),
                ),
            )
            .subcommand(
                Command::new("internal")
                    .hide(true)
                    .subcommand(Command::new("gc")),
            )
            .subcommand(Command::new("completion").arg(Arg::new("shell")))
            .subcommand(Command::new("mcp"))
            // Only the exact names are left out.
            .subcommand(Command::new("helper").subcommand(Command::new("mcp")))
    }

    fn names(tools: &ToolSet) -> Vec<&str> {
        tools.tools().iter().map(ClapTool::name).collect()
    }

    #[test]
    fn one_tool_per_visible_leaf_command() {
        let tools = ToolSet::new(&app(), &Config::new()).unwrap();
        assert_eq!(
            names(&tools),
            [
                "kube_get_pods",
                "kube_get_nodes",
                "kube_delete",
                "kube_helper_mcp"
            ]
        );
        let pods = tools.get("kube_get_pods").unwrap();
        assert_eq!(pods.command_path(), ["get", "pods"]);
        assert_eq!(
            pods.tool().to_value(),
            json!({
                "name": "kube_get_pods",
                "description": "List the pods of a namespace\n\nExamples:\n  kube get pods --namespace web",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "namespace": {"type": "string"},
                        "user": {
                            "description": "Requires 'password'. Cannot be used with 'anonymous'.",
                            "type": "string"
                        },
                        "password": {"type": "string"},
                        "anonymous": {
                            "description": "Cannot be used with 'user'.",
                            "type": "boolean",
                            "default": false
                        },
                        "verbose": {
                            "description": "How many times to pass --verbose.",
                            "type": "integer", "minimum": 0, "maximum": 255, "default": 0
                        }
                    },
                    "required": ["namespace"],
                    "dependentRequired": {"user": ["password"]},
                    "additionalProperties": false
                },
                "outputSchema": output_schema()
            })
        );
        assert_eq!(
            tools.get("kube_get_nodes").unwrap().tool().description(),
            Some("Execute the kube get nodes command")
        );
    }

    #[test]
    fn scopes_by_command_path_become_scopes_by_tool_name() {
        let config = Config::new()
            .prefix("k")
            .require_scope("get", "read")
            .require_scope("get pods", "pods");
        let tools = ToolSet::new(&app(), &config).unwrap();
        let scopes = tools.tool_scopes();
        let required: Vec<_> = scopes.required("k_get_pods").into_iter().collect();
        assert_eq!(required, ["pods", "read"]);
        assert_eq!(
            scopes
                .required("k_get_nodes")
                .into_iter()
                .collect::<Vec<_>>(),
            ["read"]
        );
        assert!(scopes.required("k_delete").is_empty());
        let error =
            ToolSet::new(&app(), &Config::new().require_scope("get podz", "read")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "require_scope: no command 'get podz' (did you mean 'get pods'?)"
        );
        let error = ToolSet::new(&app(), &Config::new().require_scope("get", "a b")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "require_scope for 'get': \"a b\" is not a scope (printable ASCII without spaces, quotes or backslashes)"
        );
    }

    #[test]
    fn prefix_allow_deny_and_annotations() {
        let read_only = ToolAnnotations {
            read_only_hint: Some(true),
            ..ToolAnnotations::default()
        };
        let config = Config::new()
            .prefix("k")
            .allow_command("get")
            .deny_command("get nodes")
            .deny_flag("anonymous")
            .annotate("get", read_only.clone());
        let tools = ToolSet::new(&app(), &config).unwrap();
        assert_eq!(names(&tools), ["k_get_pods"]);
        let pods = tools.get("k_get_pods").unwrap().tool();
        assert_eq!(pods.annotations(), &read_only);
        let properties: Vec<&String> = pods.input_schema()["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(properties, ["namespace", "user", "password", "verbose"]);

        let tools =
            ToolSet::new(&app(), &Config::new().prefix("").allow_flag("namespace")).unwrap();
        assert_eq!(
            names(&tools),
            ["get_pods", "get_nodes", "delete", "helper_mcp"]
        );
        let pods = tools.get("get_pods").unwrap().tool();
        assert_eq!(
            pods.input_schema()["properties"],
            json!({"namespace": {"type": "string"}})
        );
    }

    #[test]
    fn configuration_mistakes_are_errors() {
        let err = |config: Config| ToolSet::new(&app(), &config).unwrap_err().to_string();
        assert_eq!(
            err(Config::new().deny_command("get pod")),
            "deny_command: no command 'get pod' (did you mean 'get pods'?)"
        );
        assert_eq!(
            err(Config::new().allow_command("gte")),
            "allow_command: no command 'gte'"
        );
        assert_eq!(
            err(Config::new().deny_flag("namespac")),
            "deny_flag: no command has a flag 'namespac' (did you mean 'namespace'?)"
        );
        assert_eq!(
            err(Config::new().deny_flag("namespace")),
            "command 'kube get pods': argument 'namespace' is required, so it cannot be left out \
             by deny_flag"
        );
        assert_eq!(
            err(Config::new().argument_schema(
                "get pods",
                "namespace",
                json!({"type": "integer", "minimum": "x"})
            )),
            "command 'kube get pods': tool 'kube_get_pods': inputSchema: invalid schema at \
             '/properties/namespace/minimum': the value is not of type \"number\""
        );
        assert_eq!(
            err(Config::new().argument_schema("delete", "count", json!({"type": "object"}))),
            "argument_schema for 'count' of 'delete': only an argument that takes one string \
             value can take a JSON Schema"
        );
        assert_eq!(
            err(Config::new().argument_schema("delete", "cuont", json!({}))),
            "argument_schema for 'cuont' of 'delete': the command has no such argument (did you \
             mean 'count'?)"
        );
        assert_eq!(
            err(Config::new().argument_schema("get", "x", json!({}))),
            "argument_schema for 'x' of 'get': the command is not served as a tool"
        );
    }

    #[test]
    fn names_must_be_valid_and_distinct() {
        let app = Command::new("tool")
            .subcommand(Command::new("a_b"))
            .subcommand(Command::new("a").subcommand(Command::new("b")));
        assert_eq!(
            ToolSet::new(&app, &Config::new()).unwrap_err().to_string(),
            "commands 'tool a_b' and 'tool a b' would both be the tool 'tool_a_b'"
        );
        let app = Command::new("tool").subcommand(Command::new("say:hi"));
        assert_eq!(
            ToolSet::new(&app, &Config::new()).unwrap_err().to_string(),
            "command 'tool say:hi': tool name 'tool_say:hi' is not valid: name contains invalid \
             characters: ':'"
        );
    }

    #[test]
    fn a_command_without_subcommands_is_one_tool() {
        let app = Command::new("echo")
            .about("Print the words")
            .arg(Arg::new("words").num_args(1..).required(true))
            .subcommand(Command::new("mcp"));
        let tools = ToolSet::new(&app, &Config::new()).unwrap();
        assert_eq!(names(&tools), ["echo"]);
        let call = tools
            .prepare("echo", &json!({"words": ["-n", "mcp"]}))
            .unwrap();
        assert_eq!(call.args, ["--", "-n", "mcp"]);
    }

    #[test]
    fn calls_are_validated_rebuilt_and_checked() {
        let tools = ToolSet::new(&app(), &Config::new()).unwrap();
        assert_eq!(
            tools
                .prepare(
                    "kube_get_pods",
                    &json!({"namespace": "web", "verbose": 2, "anonymous": true})
                )
                .unwrap()
                .args,
            [
                "get",
                "pods",
                "--namespace=web",
                "--anonymous",
                "--verbose",
                "--verbose"
            ]
        );
        assert_eq!(
            tools
                .prepare("kube_delete", &json!({"count": 9, "force": true}))
                .unwrap_err()
                .to_string(),
            "argument 'count' value must be <= 5 (got 9)\nunexpected argument 'force'"
        );
        assert_eq!(
            tools
                .prepare("kube_get_pods", &json!({"namespace": "web", "user": "u"}))
                .unwrap_err()
                .to_string(),
            "missing required argument 'password' (required when 'user' is present)"
        );
        assert_eq!(
            tools
                .prepare(
                    "kube_get_pods",
                    &json!({"namespace": "web", "user": "u", "password": "p", "anonymous": true})
                )
                .unwrap_err()
                .to_string(),
            "the command line parser refused the call: the argument '--user <user>' cannot be \
             used with '--anonymous'"
        );
        assert_eq!(
            tools
                .prepare("kube_get_pod", &json!({}))
                .unwrap_err()
                .to_string(),
            "unknown tool 'kube_get_pod' (did you mean 'kube_get_pods'?)"
        );
        assert_eq!(
            tools
                .prepare("kube_delete", &json!([1]))
                .unwrap_err()
                .to_string(),
            "arguments must be an object (got an array)"
        );
    }
}
