//! toolschema: the contract between an MCP server and the model that calls it.
pub mod json;
