// Declarations of `require("toolschema")` / `import ... from "toolschema"` (lib/index.js).

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** One reason a value does not fit its schema. */
export interface ArgumentError {
  /** Where, as a caller writes it: `rows[3].id`; empty for the whole value. */
  path: string;
  /** Where, as a JSON Pointer: `/rows/3/id`. */
  pointer: string;
  /** The JSON Schema keyword that failed (`required`, `maxLength`, ...). */
  keyword: string;
  /** What is wrong and what would be accepted, as `toolschema validate` prints it. */
  message: string;
}

/** The verdict on one value. `valid` is never true for a value that could not be checked. */
export interface Verdict {
  valid: boolean;
  /** Why the value could not be checked at all (neither valid nor invalid), when it could not. */
  couldNotBeChecked?: string;
  /** The errors, in the order `toolschema validate` prints them; empty when valid. */
  errors: ArgumentError[];
}

/** A value to check: a JS value (written with JSON.stringify), or its JSON text. */
export type JsonInput = unknown;

/** An MCP tool definition, as `tools/list` lists it. */
export interface ToolDefinition {
  name: string;
  description?: string;
  inputSchema: { [key: string]: unknown };
  outputSchema?: { [key: string]: unknown };
  [key: string]: unknown;
}

/** A tool's schemas compiled once. */
export class Validator {
  private constructor();
  /** The tool's name. */
  readonly name: string;
  /** The verdict on a call's arguments (a JS value, or its JSON text: big integers stay exact). */
  validate(args: JsonInput): Verdict;
  /** Whether a call's arguments are valid; throws ToolschemaError when they could not be checked. */
  isValid(args: JsonInput): boolean;
  /** The verdict on a result's structuredContent against the tool's outputSchema. */
  validateOutput(structuredContent: JsonInput | null | undefined, options?: { isError?: boolean }): Verdict;
}

/** Options of Catalog.validator. */
export interface ValidatorOptions {
  /** "reject": also refuse top-level arguments the schema does not declare. Default "allow". */
  unknownArguments?: "allow" | "reject";
  /** Make `format` an assertion (`--assert-format`). */
  assertFormat?: boolean;
}

/** A list of MCP tools. */
export class Catalog {
  private constructor();
  /** Read a catalog from JSON text in any shape the command reads; `file` names it in errors. */
  static fromJson(text: string | Uint8Array, file?: string): Catalog;
  /** A catalog of tool definitions given as objects. */
  static fromTools(tools: ToolDefinition[]): Catalog;
  /** The name the catalog is reported under. */
  readonly file: string;
  /** The tools' names, in file order. */
  readonly names: string[];
  /** Why each tool left out was left out. */
  readonly leftOut: string[];
  /** The catalog's JSON text, as read. */
  readonly text: string;
  /** Every tool's definition. */
  readonly tools: ToolDefinition[];
  /** The definition of the tool `name`; throws UnknownToolError. */
  tool(name: string): ToolDefinition;
  /** Whether the catalog has a tool `name`. */
  has(name: string): boolean;
  /** The tool `name` compiled once; throws UnknownToolError, CatalogError or SchemaError. */
  validator(name: string, options?: ValidatorOptions): Validator;
}

/** Any JSON schema compiled once. */
export class SchemaValidator {
  private constructor();
  /** The verdict on a value (a JS value, or its JSON text). */
  validate(value: JsonInput): Verdict;
}

/** Options of compileSchema. */
export interface SchemaOptions {
  /** Overrides the schema's `$schema`. */
  dialect?: "2020-12" | "draft-07";
  /** The documents a `$ref` may name, by URI: nothing is fetched. */
  documents?: { [uri: string]: unknown };
  /** Names the value in messages. Default "value". */
  subject?: "value" | "structured content";
}

/** Compile any JSON schema (a JS value or its JSON text); throws SchemaError. */
export function compileSchema(schema: JsonInput, options?: SchemaOptions): SchemaValidator;
/** The verdict on one value against one schema. */
export function validateValue(schema: JsonInput, value: JsonInput, options?: SchemaOptions): Verdict;

/** A catalog given as a Catalog, its JSON text, or an array of tool definitions. */
export type CatalogInput = Catalog | string | Uint8Array | ToolDefinition[];

/** Which rules lint and fix apply. */
export interface RuleOptions {
  /** Rule codes, prefixes, names, `default`, `pedantic`, `ALL`. Default: the default set. */
  select?: string[];
  ignore?: string[];
  /** Providers whose compatibility rules apply. */
  target?: string[];
}

/** One finding of lint. */
export interface Diagnostic {
  file: string;
  code: string;
  severity: "critical" | "warning" | "info";
  message: string;
  tool?: string;
  pointer: string;
  line: number;
  column: number;
  fix?: "safe" | "unsafe";
}

/** Lint a catalog as `toolschema lint` does (no toolschema.toml is read). */
export function lint(catalog: CatalogInput, options?: RuleOptions): Diagnostic[];
/** The catalog text with the fixes applied (`toolschema lint --fix`). */
export function fix(catalogText: string | Uint8Array, options?: RuleOptions & { unsafeFixes?: boolean; file?: string }): string;

/** One loss of adapt. */
export interface Loss {
  tool: string;
  pointer: string;
  keyword: string;
  action: string;
  message: string;
  [key: string]: unknown;
}

/** A catalog's tools written for a model provider. */
export class Adapted {
  private constructor();
  readonly target: string;
  /** The tool declarations in the provider's request form. */
  readonly tools: unknown[];
  readonly losses: Loss[];
  /** The provider's name of each renamed tool, to the original name. */
  readonly names: { [provider: string]: string };
  /** The tools that could not be adapted, one message each. */
  readonly failures: string[];
  /** Everything, as `toolschema adapt` prints it. */
  toJSON(): { [key: string]: unknown };
  /** Map a model's call back to the server's tool; throws InvalidArgumentsError. */
  restore(tool: string, args: JsonInput): { name: string; arguments: JsonValue };
}

/** Write a catalog's tools for a provider. */
export function adapt(catalog: CatalogInput, target: "openai" | "openai-strict" | "anthropic" | "gemini" | "gemini-openapi" | string): Adapted;

/** One difference between two catalogs. */
export interface Change {
  tool: string;
  class: "breaking" | "security" | "compatible";
  code: string;
  pointer: string;
  message: string;
  /** The old value at `pointer`; null when there was none. */
  before: JsonValue;
  /** The new value at `pointer`; null when there is none. */
  after: JsonValue;
}

/** Compare two catalogs by meaning (`toolschema diff`). */
export function diff(oldCatalog: CatalogInput, newCatalog: CatalogInput): Change[];

/** The JSON text of a value as the module checks it. */
export function jsonText(value: JsonInput, what: string): string;

/** The module's version. */
export const version: string;

/** Base class of every toolschema error. */
export class ToolschemaError extends Error {}
/** JSON text that is not JSON. */
export class JSONError extends ToolschemaError {
  file: string;
  line: number;
  column: number;
}
/** A JS value with no JSON form, or text that is not UTF-8. */
export class NotJSONError extends ToolschemaError {}
/** A catalog that cannot be read, or a tool of it that breaks a rule. */
export class CatalogError extends ToolschemaError {
  file: string;
  line?: number | null;
  column?: number | null;
}
/** A tool name the catalog does not have. */
export class UnknownToolError extends ToolschemaError {
  /** The name asked for. */
  tool: string;
  suggestion?: string | null;
}
/** A schema that cannot be compiled (a remote `$ref`: nothing is fetched). */
export class SchemaError extends ToolschemaError {}
/** Arguments that break their schema where a valid call is needed. */
export class InvalidArgumentsError extends ToolschemaError {
  errors: ArgumentError[];
}
/** An option value toolschema does not know. */
export class UsageError extends ToolschemaError {}
/** The native module of this platform cannot be loaded. */
export class LoadError extends ToolschemaError {}
