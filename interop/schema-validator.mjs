// Ajv, a validator independent of the proxy's, for the interop servers and clients that judge
// arguments themselves: a schema that names draft-07 in `$schema` is compiled as draft-07, any
// other as draft 2020-12 (the MCP default).

import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";

/** The compiled validator of `schema` (throws when Ajv cannot compile it). */
export function validatorFor(schema) {
  const draft07 = typeof schema?.$schema === "string" && schema.$schema.includes("draft-07");
  const ajv = draft07 ? new Ajv({ strict: false }) : new Ajv2020({ strict: false });
  return ajv.compile(schema);
}
