//! toolschema: the contract between an MCP server and the model that calls it.
//!
//! A tool's `inputSchema` is the only thing a model reads before it fills in arguments. This crate
//! holds that contract:
//!
//! - [`Tool`]: the MCP tool definition, with name, ID and tag rules ([`tool`]);
//! - [`Catalog`]: tool lists from files in every shape they come in, with line and column of every
//!   value for diagnostics ([`catalog`]);
//! - [`schema`]: the lightweight schema shapes and their translation to standard JSON Schema,
//!   dialect detection;
//! - [`validate`]: compiled validators whose messages a model can act on
//!   (`argument 'limit' value must be <= 100`);
//! - [`lint`]: rules that find what makes a catalog unsafe or unreadable for clients, with
//!   fixes that keep every other byte of the file;
//! - [`diff`]: semantic diff of two catalogs (breaking, security, compatible changes) and pins of
//!   the definitions a model reads ([`diff::Lock`]).
//! - [`adapt`]: provider profiles (OpenAI, Anthropic, Gemini) as data, tools rewritten for each
//!   with a report of every loss, and the model's arguments mapped back.
//!
//! The crate is pure: no network, no processes, no terminal. Nothing is ever fetched: a `$ref` to
//! anything but the document itself or a document the caller registered is refused.

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
