// What the interop test servers written on Node's own `http` answer alike: a JSON body, and
// the result of a 2025-11-25 `initialize` for a server with tools.

/** Answer `res` with `body` as JSON. */
export function json(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** Answer the `initialize` request `message` for the server `name`, in the session `sessionId`. */
export function answerInitialize(res, message, name, sessionId) {
  json(
    res,
    200,
    {
      jsonrpc: "2.0",
      id: message.id,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name, version: "1.0.0" },
      },
    },
    { "mcp-session-id": sessionId },
  );
}
