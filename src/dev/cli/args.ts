/**
 * Argument parsing shared by the `edgelock` commands: Node's `parseArgs`, with its errors turned
 * into one-line usage errors that name the flag, and the package version.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { type ParseArgsConfig, parseArgs } from "node:util";

/** A usage error: printed with the command's usage, exit status 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parse `argv` against `options`; an unknown flag, a flag missing its value or a stray argument
 * becomes a {@link UsageError} that names it (Node's own text speaks of "positionals").
 *
 * @example
 * const { values, positionals } = parse(["--nodes", "3"], { nodes: { type: "string" } });
 */
export function parse<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    const flag = /'(-[^']*?)(?: <value>)?'/.exec(message)?.[1] ?? "";
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw new UsageError(`unknown option "${flag}"`);
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
      throw new UsageError(`option "${flag.split(",")[0]?.trim()}" needs a value`);
    }
    throw new UsageError(message);
  }
}

/**
 * The installed package's version: from the nearest package.json named "edgelock" above this file
 * (dist/dev/cli.js when installed, src/dev/cli/args.ts in a checkout).
 */
export function version(): string {
  for (let dir = new URL(".", import.meta.url); ; dir = new URL("..", dir)) {
    try {
      const manifest = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === "edgelock" && manifest.version !== undefined) return manifest.version;
    } catch {
      // No package.json here: look one level up.
    }
    if (dir.pathname === "/") throw new Error("the edgelock package.json was not found");
  }
}
