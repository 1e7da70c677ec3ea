// Newline-delimited JSON-RPC over stdio, for the test servers that speak it by hand (to lie,
// record or follow a script, which the SDK's transport would not let them do).

/** Write one message as a line on stdout. */
export function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

/**
 * Call `handle` with each non-blank line read from stdin (without its newline); exit when stdin
 * ends. Decoded as UTF-8 by the stream, so a character split across two reads stays whole.
 */
export function onLines(handle) {
  let buffer = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) !== -1) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.trim() !== "") handle(line);
    }
  });
  process.stdin.on("end", () => process.exit(0));
}
