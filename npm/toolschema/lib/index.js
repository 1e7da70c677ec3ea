// `require("toolschema")`: the toolschema validator, lint, fix, adapt and diff in Node.js.
//
// The work is done by the native module of this platform's package (@toolschema/cli-<platform>,
// the package that also holds the command's binary): the same core, so the same verdicts and
// messages as `toolschema validate`. Values cross to it as JSON text: a JS value is written with
// JSON.stringify (what an MCP SDK sends on the wire), a string is taken as the JSON text itself
// (its big integers stay exact).
"use strict";

const path = require("node:path");
const { platformKey } = require("../bin/toolschema.js");

/** Base class of every toolschema error. */
class ToolschemaError extends Error {
  constructor(message, fields) {
    super(message);
    if (fields) Object.assign(this, fields);
    // After the fields: the class names the error, whatever the fields hold.
    this.name = new.target.name;
  }
}
/** JSON text that is not JSON; `file`, `line` and `column` (1-based) say where. */
class JSONError extends ToolschemaError {}
/** A JS value with no JSON form (a BigInt, a cycle, nesting too deep), or text that is not UTF-8. */
class NotJSONError extends ToolschemaError {}
/** A catalog that cannot be read, or a tool of it that breaks a rule. */
class CatalogError extends ToolschemaError {}
/** A tool name the catalog does not have (`tool`); `suggestion` is the closest one it has. */
class UnknownToolError extends ToolschemaError {}
/** A schema that cannot be compiled (a `$ref` to a document elsewhere: nothing is fetched). */
class SchemaError extends ToolschemaError {}
/** Arguments that break their schema where a valid call is needed (`Adapted.restore`). */
class InvalidArgumentsError extends ToolschemaError {}
/** An option value toolschema does not know: a rule code, a provider profile. */
class UsageError extends ToolschemaError {}
/** The native module of this platform cannot be loaded. */
class LoadError extends ToolschemaError {}

const CLASSES = {
  Error: ToolschemaError,
  JSONError,
  NotJSONError,
  CatalogError,
  UnknownToolError,
  SchemaError,
  InvalidArgumentsError,
  UsageError,
};

// The native module: TOOLSCHEMA_NATIVE (a build of one's own), else this platform's package.
function loadNative() {
  let file = process.env.TOOLSCHEMA_NATIVE;
  if (!file) {
    const key = platformKey();
    if (!key) {
      throw new LoadError(
        `there is no npm package of toolschema for this platform (${process.platform}-${process.arch}); ` +
          "point TOOLSCHEMA_NATIVE at a toolschema.node you built (cargo build -p toolschema-node)",
      );
    }
    const name = `@toolschema/cli-${key}`;
    try {
      file = path.join(path.dirname(require.resolve(`${name}/package.json`)), "toolschema.node");
    } catch {
      throw new LoadError(
        `the package for this platform (${name}) is not installed: it is an optional dependency ` +
          `of toolschema (install without --omit=optional, or: npm install ${name})`,
      );
    }
  }
  try {
    return require(file);
  } catch (error) {
    throw new LoadError(`could not load ${file}: ${error.message}`);
  }
}
const native = loadNative();

// A native failure as its typed error: the native module throws an Error whose message is the
// JSON object {"toolschema": CLASS, "message": ..., fields...}.
function typed(error) {
  if (error && typeof error.message === "string" && error.message.startsWith('{"toolschema":')) {
    let fields;
    try {
      fields = JSON.parse(error.message);
    } catch {
      return error;
    }
    const { toolschema: cls, message, ...rest } = fields;
    return new (CLASSES[cls] || ToolschemaError)(message, rest);
  }
  return error;
}

// The native side answers null for a valid value: the verdict is made here.
function verdict(answer) {
  return answer === null || answer === undefined ? { valid: true, errors: [] } : answer;
}

function call(work) {
  try {
    return work();
  } catch (error) {
    throw typed(error);
  }
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The JSON text of `value`: a string is the text itself; a Buffer or Uint8Array is UTF-8 text;
 * anything else is written by JSON.stringify, as an MCP SDK writes it on the wire.
 */
function jsonText(value, what) {
  if (typeof value === "string") return value;
  if (value instanceof Uint8Array) {
    try {
      return decoder.decode(value);
    } catch {
      throw new NotJSONError(`${what}: the JSON text is not valid UTF-8`);
    }
  }
  let text;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    // A BigInt, a cycle, or nesting deeper than the stack: no JSON form.
    throw new NotJSONError(`${what}: ${error.message}`);
  }
  if (text === undefined) throw new NotJSONError(`${what}: ${typeof value} is not a JSON value`);
  return text;
}

/** A tool's schemas compiled once: validate its calls' arguments and results many times. */
class Validator {
  constructor(inner) {
    this._inner = inner;
  }
  /** The tool's name. */
  get name() {
    return this._inner.name;
  }
  /** The verdict on a call's arguments (a JS value, or its JSON text). */
  validate(args) {
    const text = jsonText(args === undefined ? {} : args, "arguments");
    return verdict(call(() => this._inner.validate(text)));
  }
  /** Whether a call's arguments are valid; throws for arguments that could not be checked. */
  isValid(args) {
    const verdict = this.validate(args);
    if (verdict.couldNotBeChecked !== undefined && verdict.couldNotBeChecked !== null) {
      throw new ToolschemaError(verdict.couldNotBeChecked, { couldNotBeChecked: true });
    }
    return verdict.valid;
  }
  /**
   * The verdict on a result's structuredContent (undefined or null when it has none) against the
   * tool's outputSchema; an error result (`isError`) always passes.
   */
  validateOutput(structuredContent, { isError = false } = {}) {
    const text =
      structuredContent === undefined || structuredContent === null
        ? null
        : jsonText(structuredContent, "structured content");
    return verdict(call(() => this._inner.validateOutput(text, Boolean(isError))));
  }
}

/** A list of MCP tools, from JSON text in any shape the command reads. */
class Catalog {
  constructor(inner, text) {
    this._inner = inner;
    this._text = text;
    this._tools = undefined;
  }
  /**
   * Read a catalog from JSON text (a string, Buffer or Uint8Array): `{"tools": [...]}`, a
   * JSON-RPC response holding one, a bare list of tools, or one tool.
   */
  static fromJson(text, file = "<input>") {
    if (typeof text !== "string" && !(text instanceof Uint8Array)) {
      throw new UsageError(`${file}: Catalog.fromJson takes JSON text; use Catalog.fromTools for tool objects`);
    }
    const json = jsonText(text, file);
    return new Catalog(call(() => native.NativeCatalog.read(json, String(file))), json);
  }
  /** A catalog of tool definitions given as objects (as `tools/list` lists them). */
  static fromTools(tools) {
    if (!Array.isArray(tools)) throw new CatalogError("<tools>: give the tools as an array of objects");
    const json = jsonText(tools, "<tools>");
    return new Catalog(call(() => native.NativeCatalog.read(json, "<tools>")), json);
  }
  /** The name the catalog is reported under. */
  get file() {
    return this._inner.file;
  }
  /** The tools' names, in file order. */
  get names() {
    return this._inner.names;
  }
  /** Why each tool left out was left out (a bad name, a name used twice). */
  get leftOut() {
    return this._inner.leftOut;
  }
  /** The catalog's JSON text, as read. */
  get text() {
    return this._text;
  }
  /** Every tool's definition (the tools left out are not among them). */
  get tools() {
    if (this._tools === undefined) this._tools = JSON.parse(this._inner.toolsJson());
    return this._tools;
  }
  /** The definition of the tool `name`; throws UnknownToolError (with a did-you-mean). */
  tool(name) {
    return JSON.parse(call(() => this._inner.toolJson(String(name))));
  }
  /** Whether the catalog has a tool `name`. */
  has(name) {
    return this.names.includes(name);
  }
  /**
   * The tool `name` compiled once. `unknownArguments: "reject"` also refuses top-level
   * arguments the schema does not declare (`--unknown-arguments reject`); `assertFormat: true`
   * makes `format` an assertion (`--assert-format`).
   */
  validator(name, { unknownArguments = "allow", assertFormat = false } = {}) {
    if (unknownArguments !== "allow" && unknownArguments !== "reject") {
      throw new UsageError(`unknownArguments '${unknownArguments}': use 'allow' or 'reject'`);
    }
    const inner = call(() =>
      this._inner.validator(String(name), unknownArguments === "reject", Boolean(assertFormat)),
    );
    return new Validator(inner);
  }
}

// A catalog given as a Catalog, its JSON text, or an array of tool objects.
function catalogOf(catalog) {
  if (catalog instanceof Catalog) return catalog;
  if (typeof catalog === "string" || catalog instanceof Uint8Array) return Catalog.fromJson(catalog);
  return Catalog.fromTools(catalog);
}

/** Any JSON schema compiled once (`toolschema validate --schema`). */
class SchemaValidator {
  constructor(inner) {
    this._inner = inner;
  }
  /** The verdict on a value (a JS value, or its JSON text). */
  validate(value) {
    const text = jsonText(value, "value");
    return verdict(call(() => this._inner.validate(text)));
  }
}

/**
 * Compile any JSON schema (a JS value or its JSON text). `dialect` ("2020-12" or "draft-07")
 * overrides its `$schema`; `documents` maps URIs to the documents a `$ref` may name (nothing is
 * fetched); `subject` ("value" or "structured content") names the value in messages.
 */
function compileSchema(schema, { dialect, documents, subject } = {}) {
  const text = jsonText(schema, "schema");
  const docs = documents === undefined ? undefined : jsonText(documents, "documents");
  return new SchemaValidator(call(() => native.NativeSchema.compile(text, dialect, docs, subject)));
}

/** The verdict on one value against one schema (see compileSchema). */
function validateValue(schema, value, options) {
  return compileSchema(schema, options).validate(value);
}

/**
 * Lint a catalog (a Catalog, its JSON text, or an array of tools) with the rules `select` names
 * (the default set when absent), less those `ignore` names, plus the compatibility rules of the
 * providers `target` names. No toolschema.toml is read.
 */
function lint(catalog, { select, ignore, target } = {}) {
  const c = catalogOf(catalog);
  return call(() => native.lint(c.text, c.file, select, ignore, target));
}

/** The catalog text with the fixes applied, every other byte kept (`toolschema lint --fix`). */
function fix(catalogText, { unsafeFixes = false, select, ignore, target, file = "<input>" } = {}) {
  const text = jsonText(catalogText, file);
  return call(() => native.fix(text, String(file), Boolean(unsafeFixes), select, ignore, target));
}

/** A catalog's tools written for a model provider (see adapt). */
class Adapted {
  constructor(inner, target) {
    this._inner = inner;
    this._output = JSON.parse(inner.json);
    this.target = target;
  }
  /** The tool declarations in the provider's request form. */
  get tools() {
    return this._output.tools;
  }
  /** Every loss: {tool, pointer, keyword, action, message}. */
  get losses() {
    return this._output.losses;
  }
  /** The provider's name of each renamed tool, to the original name. */
  get names() {
    return this._output.names;
  }
  /** The tools that could not be adapted, one message each. */
  get failures() {
    return this._inner.failures;
  }
  /** Everything, as `toolschema adapt` prints it. */
  toJSON() {
    return this._output;
  }
  /**
   * Map a model's call back to the server's tool: {name, arguments} with the original name and
   * the arguments in the original schema's form. Throws InvalidArgumentsError when the restored
   * arguments break the original schema.
   */
  restore(tool, args) {
    const text = jsonText(args === undefined ? {} : args, "arguments");
    return JSON.parse(call(() => this._inner.restore(String(tool), text)));
  }
}

/** Write a catalog's tools for a provider: openai, openai-strict, anthropic, gemini, gemini-openapi. */
function adapt(catalog, target) {
  const c = catalogOf(catalog);
  return new Adapted(call(() => native.adapt(c._inner, String(target))), String(target));
}

/** Compare two catalogs by meaning (`toolschema diff`): each change breaking, security or compatible. */
function diff(oldCatalog, newCatalog) {
  const a = catalogOf(oldCatalog);
  const b = catalogOf(newCatalog);
  return JSON.parse(call(() => native.diff(a._inner, b._inner)));
}

const version = native.version();

module.exports = {
  version,
  Catalog,
  Validator,
  SchemaValidator,
  compileSchema,
  validateValue,
  lint,
  fix,
  adapt,
  Adapted,
  diff,
  jsonText,
  ToolschemaError,
  JSONError,
  NotJSONError,
  CatalogError,
  UnknownToolError,
  SchemaError,
  InvalidArgumentsError,
  UsageError,
  LoadError,
};
