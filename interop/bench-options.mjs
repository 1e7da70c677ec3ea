// The numeric options of the benchmark clients (`--calls 20`), read the same way by each.

/**
 * The number given after `name` in `args`, or `fallback` when `name` is absent. A value that is
 * not a number ends the process with status 2, so a typo never runs a benchmark on NaN.
 */
export function numberOption(args, name, fallback) {
  const at = args.indexOf(name);
  if (at === -1) return fallback;
  const value = Number(args[at + 1]);
  if (args[at + 1] === undefined || !Number.isFinite(value)) {
    console.error(`${name} takes a number, not ${JSON.stringify(args[at + 1] ?? "nothing")}`);
    process.exit(2);
  }
  return value;
}
