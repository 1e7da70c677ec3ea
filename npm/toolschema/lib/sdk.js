// `require("toolschema/sdk")`: toolschema for the MCP TypeScript SDK (@modelcontextprotocol/sdk).
//
//   toolschemaValidator()      a `jsonSchemaValidator` provider: `new Client(info,
//                              {jsonSchemaValidator: toolschemaValidator()})` checks every tool
//                              result's structuredContent against its outputSchema with toolschema.
//   validateToolCall(tools, request)
//                              the refusal of a `tools/call` whose arguments break the tool's
//                              inputSchema (a result with isError: true and toolschema's messages,
//                              one per line, as SEP-1303 asks), or undefined when it may run.
//   validatingCallHandler(tools, handler)
//                              a low-level Server's `tools/call` handler that refuses invalid calls
//                              before `handler` runs.
// No import of the SDK itself: the provider and the handler follow its interfaces, so this module
// works with whichever SDK version the application has.
"use strict";

const { Catalog, compileSchema, ToolschemaError } = require("./index.js");

// A value from the SDK is a JS value, never JSON text: a string is checked as a JSON string.
const asValue = (value) => (typeof value === "string" ? JSON.stringify(value) : value);

/** One message per line: what a refusal's text and a provider's errorMessage hold. */
function messagesOf(verdict) {
  if (verdict.couldNotBeChecked !== undefined && verdict.couldNotBeChecked !== null) {
    return [verdict.couldNotBeChecked];
  }
  return verdict.errors.map((e) => e.message);
}

/**
 * A `jsonSchemaValidator` provider for the SDK's Client (and Server): each schema compiled once,
 * by its JSON text. A value that could not be checked is not valid; a schema that cannot be
 * compiled (a remote `$ref`: nothing is fetched) gives a validator refusing every value with why.
 * `subject` ("value", the default, or "structured content") names the value in messages.
 */
function toolschemaValidator({ subject, dialect } = {}) {
  const cache = new Map();
  return {
    getValidator(schema) {
      const key = JSON.stringify(schema);
      let check = cache.get(key);
      if (check === undefined) {
        check = makeCheck(key, subject, dialect);
        cache.set(key, check);
      }
      return check;
    },
  };
}

function makeCheck(schemaText, subject, dialect) {
  let compiled;
  try {
    compiled = compileSchema(schemaText, { subject, dialect });
  } catch (error) {
    const errorMessage = error instanceof ToolschemaError ? error.message : String(error);
    return () => ({ valid: false, data: undefined, errorMessage });
  }
  return (input) => {
    let verdict;
    try {
      verdict = compiled.validate(asValue(input));
    } catch (error) {
      // A value with no JSON form (a BigInt, a cycle) cannot be checked: not valid.
      return { valid: false, data: undefined, errorMessage: error.message };
    }
    if (verdict.valid) return { valid: true, data: input, errorMessage: undefined };
    return { valid: false, data: undefined, errorMessage: messagesOf(verdict).join("\n") };
  };
}

// Tools compiled once per list given: the list's Catalog, and each tool's Validator.
const compiledLists = new WeakMap();

function compiledList(tools) {
  if (tools instanceof Catalog) tools = { catalog: tools };
  let entry = compiledLists.get(tools);
  if (entry === undefined) {
    const catalog = tools.catalog instanceof Catalog ? tools.catalog : Catalog.fromTools(tools);
    entry = { catalog, validators: new Map() };
    compiledLists.set(tools, entry);
  }
  return entry;
}

/** A tool result refusing a call: isError, toolschema's messages one per line. */
function refusal(messages) {
  return { content: [{ type: "text", text: messages.join("\n") }], isError: true };
}

/**
 * The refusal of a `tools/call` request (or its params) whose arguments break the inputSchema of
 * the tool it names among `tools` (an array of tool definitions as `tools/list` gives them, or a
 * Catalog), or undefined when the call may run. Absent arguments read as {} (MCP's rule). A call
 * of a tool `tools` does not have, or whose arguments could not be checked, is refused.
 * `options.unknownArguments: "reject"` also refuses undeclared top-level arguments.
 */
function validateToolCall(tools, request, options = {}) {
  const params = request && request.params !== undefined ? request.params : request;
  const name = params && params.name;
  if (typeof name !== "string") return refusal(["tools/call: the request names no tool"]);
  const entry = compiledList(tools);
  let validator = entry.validators.get(name);
  if (validator === undefined) {
    try {
      validator = entry.catalog.validator(name, options);
    } catch (error) {
      // An unknown tool (with its did-you-mean), or a schema that cannot be compiled: refused.
      return refusal([error.message]);
    }
    entry.validators.set(name, validator);
  }
  let verdict;
  try {
    const args = params.arguments === undefined || params.arguments === null ? {} : params.arguments;
    verdict = validator.validate(asValue(args));
  } catch (error) {
    return refusal([error.message]);
  }
  if (verdict.valid) return undefined;
  return refusal(messagesOf(verdict));
}

/**
 * A `tools/call` handler for a low-level Server (`server.setRequestHandler(CallToolRequestSchema,
 * validatingCallHandler(tools, handler))`): an invalid call is answered with the refusal and
 * `handler` never runs. `tools` is the array the server lists (or a Catalog), or a function
 * returning it (read on each call: keep returning the same array while the tools do not change,
 * so that they are compiled once).
 */
function validatingCallHandler(tools, handler, options = {}) {
  if (typeof handler !== "function") throw new TypeError("validatingCallHandler: handler must be a function");
  return async (request, extra) => {
    const list = typeof tools === "function" ? await tools() : tools;
    const refused = validateToolCall(list, request, options);
    if (refused !== undefined) return refused;
    return handler(request, extra);
  };
}

module.exports = { toolschemaValidator, validateToolCall, validatingCallHandler };
