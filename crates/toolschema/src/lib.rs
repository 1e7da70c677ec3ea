//! toolschema: the contract between an MCP server and the model that calls it.
//!
//! A tool's `inputSchema` is the only thing a model reads before it fills in arguments. This crate
//! holds that contract. It is pure: no network, no processes, no terminal. Nothing is ever
//! fetched: a `$ref` to anything but the document itself, or a document the caller registered,
//! is refused.
//!
//! The book (`docs/` in the repository) describes the `toolschema` command built on this crate.
//! Each entry point below has an example that runs as a doc test.
//!
//! # Compile a tool once, validate many times
//!
//! [`Tool`] reads an MCP tool definition, keeping every field in order. [`Tool::compile`] gives a
//! [`CompiledTool`], whose messages a model can act on.
//!
//! ```
//! use serde_json::json;
//! use toolschema::Tool;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tool = Tool::from_value(json!({
//!     "name": "search",
//!     "inputSchema": {
//!         "query": {"type": "string", "required": true, "minLength": 3},
//!         "limit": {"type": "integer", "maximum": 100}
//!     }
//! }))?;
//! let compiled = tool.compile()?;
//! compiled.validate_input(&json!({"query": "rust"}))?;
//!
//! let errors = compiled.validate_input(&json!({"query": "x", "limit": 500})).unwrap_err();
//! let messages: Vec<_> = errors.iter().map(|e| e.message.as_str()).collect();
//! assert_eq!(
//!     messages,
//!     [
//!         "argument 'query' string length must be >= 3 (got 1)",
//!         "argument 'limit' value must be <= 100 (got 500)",
//!     ]
//! );
//! # Ok(())
//! # }
//! ```
//!
//! The `inputSchema` above is a lightweight shape; [`schema`] translates it to standard JSON
//! Schema, which is what goes on the wire.
//!
//! # Read a catalog
//!
//! [`Catalog::from_json`] reads `{"tools": [...]}`, a JSON-RPC response, a bare array or one tool,
//! and knows the line and column of every value. [`CatalogLayout`] reads very large catalogs one
//! tool at a time.
//!
//! ```
//! use toolschema::Catalog;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let text = r#"{"tools": [{"name": "search", "inputSchema": {"type": "object"}}]}"#;
//! let catalog = Catalog::from_json("tools.json", text)?;
//! let names: Vec<_> = catalog.tools().map(|t| t.name()).collect();
//! assert_eq!(names, ["search"]);
//! # Ok(())
//! # }
//! ```
//!
//! # Validate any value against any schema
//!
//! [`SchemaValidator`] compiles one schema. [`CompileOptions`] sets the dialect, makes `format`
//! an assertion, and registers the documents a `$ref` may name.
//!
//! ```
//! use serde_json::json;
//! use toolschema::{CompileOptions, SchemaValidator};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let options = CompileOptions::new().assert_format(true);
//! let port = SchemaValidator::with_options(&json!({"type": "integer", "minimum": 1}), &options)?;
//! assert!(port.validate(&json!(8080)).is_ok());
//! assert!(port.validate(&json!(0)).is_err());
//!
//! let elsewhere = SchemaValidator::new(&json!({"$ref": "https://example.com/schema.json"}));
//! assert!(elsewhere.is_err(), "nothing is fetched");
//! # Ok(())
//! # }
//! ```
//!
//! # Lint a catalog, and fix it
//!
//! [`lint::Linter`] runs the rules of [`lint::RULES`]. Fixes are text edits that keep every other
//! byte of the file.
//!
//! ```
//! use toolschema::lint::{Linter, RuleSelection};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let text = r#"{"tools": [{"name": "search", "description": "Search the docs by keyword.",
//!   "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}]}"#;
//! let linter = Linter::new(RuleSelection::default());
//! let report = linter.lint("tools.json", text)?;
//! let codes: Vec<_> = report.diagnostics.iter().map(|d| d.code()).collect();
//! assert_eq!(codes, ["SCH-002"]);
//! let fixed = linter.fix("tools.json", text, false)?;
//! assert!(fixed.remaining.diagnostics.is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! # Compare two catalogs, and pin a server's tools
//!
//! [`diff::diff_tools`] compares by meaning and classes each change as breaking, security or
//! compatible. A [`diff::Lock`] pins each tool by the SHA-256 of its canonical JSON; a pin
//! drifts exactly when the diff reports a change.
//!
//! ```
//! use serde_json::json;
//! use toolschema::diff::{command_key, diff_tools, ChangeClass, Lock, PinStatus};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let old = json!({"name": "search", "inputSchema": {"type": "object",
//!     "properties": {"q": {"type": "string", "maxLength": 64}}}});
//! let new = json!({"name": "search", "inputSchema": {"type": "object",
//!     "properties": {"q": {"type": "string", "maxLength": 32}}}});
//! let (old, new) = (old.as_object().unwrap(), new.as_object().unwrap());
//! let diff = diff_tools([old], [new]);
//! assert_eq!(diff.changes[0].class, ChangeClass::Breaking);
//!
//! let key = command_key("npx", &["-y", "my-server"]);
//! let mut lock = Lock::default();
//! lock.pin(&key, [old])?;
//! let lock = Lock::from_json(&lock.to_json())?;
//! let pins = lock.require_server(&key)?;
//! assert!(matches!(pins.check(&json!(old)), PinStatus::Pinned));
//! assert!(matches!(pins.check(&json!(new)), PinStatus::Drifted(_)));
//! assert!(matches!(pins.check(&json!({"name": "other"})), PinStatus::NotInLock));
//! # Ok(())
//! # }
//! ```
//!
//! # Write tools for a model provider
//!
//! [`adapt::adapt`] rewrites tools by a provider's [`adapt::Profile`] and reports every loss;
//! the adapted tool maps the model's arguments back.
//!
//! ```
//! use serde_json::json;
//! use toolschema::{adapt, Tool};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tool = Tool::from_value(json!({"name": "search", "inputSchema": {"type": "object",
//!     "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["q"]}}))?;
//! let strict = adapt::profile("openai-strict")?;
//! let adapted = adapt::adapt_tool(strict, &tool)?;
//! assert_eq!(adapted.schema()["required"], json!(["q", "limit"]));
//! let back = adapted.restore_arguments(&json!({"q": "rust", "limit": null}))?;
//! assert_eq!(back, json!({"q": "rust"}));
//! # Ok(())
//! # }
//! ```
//!
//! # Make valid and invalid values from a schema
//!
//! [`generate`] makes the cases `toolschema fuzz` sends. Each is checked by the validator; the
//! same seed gives the same cases on every machine.
//!
//! ```
//! use serde_json::json;
//! use toolschema::generate::{self, GenerateOptions, Kind};
//! use toolschema::SchemaValidator;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let schema = SchemaValidator::new(&json!({"type": "integer", "minimum": 1, "maximum": 10}))?;
//! let generated = generate::values(&schema, &GenerateOptions { seed: 7, cases: 20 });
//! for case in &generated.cases {
//!     let value = case.value.as_ref().expect("values are never absent here");
//!     assert_eq!(case.kind == Kind::Valid, schema.validate(value).is_ok());
//! }
//! # Ok(())
//! # }
//! ```

pub mod adapt;
pub mod catalog;
pub mod diff;
pub mod generate;
pub mod glob;
pub mod json;
pub mod lint;
pub mod schema;
pub mod size;
pub mod suggest;
pub mod text;
pub mod tool;
pub mod validate;

pub use catalog::{Catalog, CatalogError, CatalogLayout, UnknownTool};
pub use glob::Glob;
pub use schema::{Dialect, SchemaError, SchemaShape};
pub use tool::{Tool, ToolAnnotations, ToolError, ToolId};
pub use validate::{
    CompileError, CompileOptions, CompiledTool, SchemaValidator, Subject, ValidationError,
    ValidationErrors,
};
