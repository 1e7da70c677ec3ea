// Newline-delimited JSON-RPC over stdio, for the test servers that speak it by hand (to lie,
// record or follow a script, which the SDK's transport would not let them do), and for scripts
// that speak it to a child process.

/** Write one message as a line on stdout. */
export function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

/**
 * Call `handle` with each non-blank line read from `stream` (without its newline). Decoded as
 * UTF-8 by the stream, so a character split across two reads stays whole.
 */
export function readLines(stream, handle) {
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) !== -1) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.trim() !== "") handle(line);
    }
  });
}

/** Call `handle` with each non-blank line read from stdin; exit when stdin ends. */
export function onLines(handle) {
  readLines(process.stdin, handle);
  process.stdin.on("end", () => process.exit(0));
}
