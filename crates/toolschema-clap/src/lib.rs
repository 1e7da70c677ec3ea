//! Serve any clap 4 command line (builder or derive) as MCP tools, with input schemas as precise as
//! the CLI itself.
//!
//! Every runnable leaf command becomes a tool named by its path (`kubectl get pods` ->
//! `kubectl_get_pods`). Each argument becomes a property typed from what clap knows: its action,
//! value parser, range, possible values, arity, default, and whether it is required (see
//! [the mapping](#the-mapping)). A call is validated against the schema by the core
//! validator, rebuilt into a command line, checked by the application's own clap parser, and run
//! as a child process of the same executable with a timeout.
//!
//! Add it to an application in a few lines:
//!
//! ```no_run
//! use clap::{CommandFactory, FromArgMatches, Parser};
//! use std::process::ExitCode;
//! use toolschema_clap::Config;
//!
//! #[derive(Parser)]
//! #[command(name = "demo")]
//! enum Cli {
//!     /// Say hello
//!     Greet { name: String },
//! }
//!
//! fn main() -> ExitCode {
//!     let config = Config::new();
//!     let app = toolschema_clap::with_mcp(Cli::command(), &config);
//!     let matches = app.clone().get_matches();
//!     if let Some(exit) = toolschema_clap::dispatch(&app, &matches, &config) {
//!         return exit; // `demo mcp start`, `demo mcp stream`, `demo mcp tools`, ...
//!     }
//!     match Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit()) {
//!         Cli::Greet { name } => println!("Hello, {name}!"),
//!     }
//!     ExitCode::SUCCESS
//! }
//! ```
//!
//! [`with_mcp`] adds the `mcp` subcommand; [`dispatch`] runs it when it was chosen.
//! [`mcp_command`] gives the subcommand alone, and [`run`] runs it, for applications that add
//! it themselves. The book's page "A clap CLI as MCP tools" shows what `mcp` does.
//!
//! # The tools, without serving them
//!
//! [`ToolSet`] holds the tools of an application, as `tools/list` would list them.
//! [`ToolSet::prepare`] checks a call and rebuilds its command line, without running anything.
//!
//! ```
//! use clap::{Arg, Command};
//! use serde_json::json;
//! use toolschema_clap::{Config, ToolSet};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let app = Command::new("demo").subcommand(
//!     Command::new("greet")
//!         .about("Say hello")
//!         .arg(Arg::new("times").long("times").value_parser(clap::value_parser!(u8).range(1..=10))),
//! );
//! let tools = ToolSet::new(&app, &Config::new())?;
//! let greet = tools.get("demo_greet").expect("one tool per leaf command");
//! let schema = greet.tool().fields()["inputSchema"].clone();
//! assert_eq!(schema["properties"]["times"]["maximum"], json!(10));
//!
//! let call = tools.prepare("demo_greet", &json!({"times": 3}))?;
//! assert_eq!(call.args, ["greet", "--times=3"]);
//! let refused = tools.prepare("demo_greet", &json!({"times": 11})).unwrap_err();
//! assert_eq!(refused.to_string(), "argument 'times' value must be <= 10 (got 11)");
//! # Ok(())
//! # }
//! ```
//!
//! # Configuration
//!
//! [`Config`] chooses which commands and flags become tools, names them, and annotates them.
//! A path or flag that does not exist is an error when the tools are built.
//!
//! ```
//! use clap::Command;
//! use toolschema_clap::{Config, ToolAnnotations, ToolSet};
//!
//! let app = Command::new("demo")
//!     .subcommand(Command::new("files").subcommand(Command::new("list")).subcommand(Command::new("delete")));
//! let config = Config::new()
//!     .prefix("fs")
//!     .deny_command("files delete")
//!     .annotate("files list", ToolAnnotations { read_only_hint: Some(true), ..Default::default() });
//! let tools = ToolSet::new(&app, &config).expect("the configuration names real commands");
//! let names: Vec<_> = tools.tools().iter().map(|t| t.name()).collect();
//! assert_eq!(names, ["fs_files_list"]);
//!
//! let typo = Config::new().deny_command("files remove");
//! assert!(ToolSet::new(&app, &typo).is_err());
//! ```
//!
//! # The mapping
//!
//! | clap | JSON Schema |
//! | --- | --- |
//! | `SetTrue` / `SetFalse` | `boolean`; the flag is passed when the value differs from what clap does without it |
//! | `Count` | `integer`, 0 to 255 |
//! | `Append`, or several values per occurrence | `array`, `minItems`/`maxItems` from `num_args`; arrays of arrays for `Append` with several values each |
//! | integer value parsers | `integer` with the type's bounds, narrowed to a `.range()` |
//! | `f32`, `f64` | `number` |
//! | `bool` value parser with `Set` | `boolean` |
//! | possible values (`ValueEnum`, `PossibleValuesParser`) | `enum` of the visible values |
//! | parsers that refuse `""` (`NonEmptyStringValueParser`, `PathBuf`) | `minLength: 1` |
//! | anything else | `string`, the description saying what it is (a path, a URL) |
//! | default values | `default` (not for empty strings or lists) |
//! | env fallbacks, `requires`, `conflicts_with` | stated in the description; `requires` of a single value also as `dependentRequired` |
//!
//! Properties are named by clap id (with derive, the field name); `additionalProperties` is
//! `false`. Results carry `{stdout, stderr, exitCode}` as `structuredContent` and as text, with
//! `isError` when the exit code is not 0.

mod argument;
mod argv;
mod clients;
mod command;
mod config;
mod exec;
mod http;
mod probe;
mod server;
mod tools;

pub use command::{dispatch, mcp_command, run, with_mcp};
pub use config::{Config, DEFAULT_OUTPUT_LIMIT, DEFAULT_TIMEOUT};
pub use server::ServeError;
pub use tools::{output_schema, BuildError, CallError, ClapTool, Invocation, ToolSet};
/// The annotations [`Config::annotate`] takes, re-exported from the core crate.
pub use toolschema::ToolAnnotations;
