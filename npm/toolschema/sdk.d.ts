// Declarations of `require("toolschema/sdk")` (lib/sdk.js): toolschema for @modelcontextprotocol/sdk.
import type { Catalog, ToolDefinition, ValidatorOptions } from "./index";

/** What a validator of the SDK's `jsonSchemaValidator` interface returns. */
export type ValidatorResult<T> =
  | { valid: true; data: T; errorMessage: undefined }
  | { valid: false; data: undefined; errorMessage: string };

/** The SDK's `jsonSchemaValidator` interface. */
export interface ToolschemaValidatorProvider {
  getValidator<T>(schema: unknown): (input: unknown) => ValidatorResult<T>;
}

/** A `jsonSchemaValidator` provider checking with toolschema. */
export function toolschemaValidator(options?: {
  subject?: "value" | "structured content";
  dialect?: "2020-12" | "draft-07";
}): ToolschemaValidatorProvider;

/** A tool result refusing a call. */
export interface Refusal {
  content: { type: "text"; text: string }[];
  isError: true;
  /** Open, as the SDK's result types are. */
  [key: string]: unknown;
}

/** The tools a server lists: the array of definitions, or a Catalog. */
export type ToolList = ToolDefinition[] | Catalog;

/** The refusal of an invalid `tools/call` (request or params), or undefined when it may run. */
export function validateToolCall(
  tools: ToolList,
  request: { params?: { name: string; arguments?: unknown } } | { name: string; arguments?: unknown },
  options?: ValidatorOptions,
): Refusal | undefined;

/** A `tools/call` handler refusing invalid calls before `handler` runs. */
export function validatingCallHandler<Req extends { params: { name: string; arguments?: unknown } }, Extra, Res>(
  tools: ToolList | (() => ToolList | Promise<ToolList>),
  handler: (request: Req, extra: Extra) => Res | Promise<Res>,
  options?: ValidatorOptions,
): (request: Req, extra: Extra) => Promise<Res | Refusal>;
