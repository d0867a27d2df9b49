/**
 * The `edgelock` command line (package `bin`, through bin/edgelock.mjs).
 *
 * - `edgelock dev [--memory|--redis] [--nodes N] [--port P] [--host H] [--persistence none|aof]
 *   [--json]` starts a dev cluster in the foreground (on redis-server, or in memory without it),
 *   prints `{"nodes":[{"url","token"},…]}` as the first line of stdout (with `--json`, nothing
 *   else; which backend runs goes to stderr), then hints, and stops everything on SIGINT/SIGTERM.
 * - `edgelock inspect <key>` and `edgelock force-release <key>`: the operator commands (see
 *   `cli/operator.ts`).
 * - `--version`, `--help` (also per command).
 *
 * Exit status: 0 ok, 1 failure, 2 usage (bad arguments, no nodes configured).
 *
 * @example
 * ```sh
 * npx edgelock dev --nodes 3
 * npx edgelock inspect invoice:42 --nodes nodes.json
 * ```
 *
 * @module
 */

import { isConfigurationError } from "../errors";
import { parse, UsageError, version } from "./cli/args";
import { DEV_USAGE, parseDev, runDev } from "./cli/dev";
import { ask, FORCE_RELEASE_USAGE, forceRelease, INSPECT_USAGE, inspect } from "./cli/operator";

const USAGE = `Usage: edgelock <command> [options]

Commands:
  dev                      start a local cluster of Upstash-compatible nodes (redis-server, or
                           in memory without it)
  inspect <key>…           show what every node holds for a lock key
  force-release <key>…     delete a lock key on every node, whoever holds it
  help [command]           show this help, or a command's

Options:
  -v, --version            print the version
  -h, --help               show this help (also: edgelock <command> --help)`;

const USAGES: Record<string, string> = {
  dev: DEV_USAGE,
  inspect: INSPECT_USAGE,
  "force-release": FORCE_RELEASE_USAGE,
};

/** Print `lines` to stdout and give `code` back (the exit status). */
function print(lines: readonly string[], code = 0): number {
  process.stdout.write(`${lines.join("\n")}\n`);
  return code;
}

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "help") {
    const [topic, ...extra] = rest;
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (topic === undefined) return print([USAGE]);
    const usage = USAGES[topic];
    if (usage === undefined) throw new UsageError(`unknown command "${topic}"`);
    return print([usage]);
  }
  if (command === undefined || !(command in USAGES)) {
    const { values, positionals } = parse(argv, {
      version: { type: "boolean", short: "v", default: false },
      help: { type: "boolean", short: "h", default: false },
    });
    if (values.version) return print([version()]);
    if (values.help) return print([USAGE]);
    throw new UsageError(
      positionals[0] === undefined ? "missing command" : `unknown command "${positionals[0]}"`,
    );
  }
  const usage = USAGES[command] ?? USAGE;
  if (command === "dev") {
    const parsed = parseDev(rest);
    if (parsed === undefined) return print([usage]);
    return runDev(parsed);
  }
  const result =
    command === "inspect"
      ? await inspect(rest, process.env)
      : await forceRelease(rest, process.env, { isTTY: process.stdin.isTTY === true, ask });
  if (result === undefined) return print([usage]);
  return print(result.out, result.code);
}

async function main(argv: string[]): Promise<number> {
  try {
    return await run(argv);
  } catch (error) {
    const usage = USAGES[argv[0] ?? ""] ?? USAGE;
    if (error instanceof UsageError) {
      process.stderr.write(`edgelock: ${error.message}\n\n${usage}\n`);
      return 2;
    }
    // A malformed EDGELOCK_NODES & co.: the message names the variable, never its value.
    if (isConfigurationError(error)) {
      process.stderr.write(`edgelock: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`edgelock: ${(error as Error).message ?? String(error)}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`edgelock: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
