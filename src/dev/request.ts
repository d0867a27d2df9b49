/**
 * Request bodies → commands. A command is a JSON array `[name, ...args]`: the name is forwarded
 * verbatim (any case); strings travel as their UTF-8 bytes, numbers as `String(n)` (which is exactly
 * the text the JS client's `JSON.stringify` produced), booleans as `"true"`/`"false"`. `null`,
 * objects and nested arrays are refused with 400 rather than guessed at (SRH sends `null` as `""`,
 * which silently stores an empty string).
 *
 * Commands that would change the state of a shared connection (SELECT, AUTH, HELLO, QUIT, RESET,
 * CLIENT REPLY/TRACKING/CACHING), SHUTDOWN, subscribe/monitor, transaction verbs and blocking commands are
 * refused with 400, as Upstash refuses them: one client must never be able to wedge the connection
 * every other request shares.
 *
 * @module
 */

/** A validated command, ready to be sent. */
export interface ParsedCommand {
  /** Name as the client spelled it. */
  readonly name: string;
  /** Lower-case name, for matching and statistics. */
  readonly lower: string;
  readonly args: string[];
}

/** A malformed or refused request: the endpoint answers 400 with this message. */
export class BadRequestError extends Error {
  override name = "BadRequestError";
}

const REFUSED = new Set([
  // connection state shared with every other request
  "select",
  "auth",
  "hello",
  "quit",
  "reset",
  // the node's lifecycle belongs to DevNode.kill()/restart(), not to a REST caller
  "shutdown",
  // streams of pushes instead of one reply
  "subscribe",
  "psubscribe",
  "ssubscribe",
  "unsubscribe",
  "punsubscribe",
  "sunsubscribe",
  "monitor",
  "sync",
  "psync",
  // transactions: /multi-exec wraps them itself
  "multi",
  "exec",
  "discard",
  "watch",
  "unwatch",
  // blocking: would stall every request behind them on the shared connection
  "blpop",
  "brpop",
  "brpoplpush",
  "blmove",
  "blmpop",
  "bzpopmin",
  "bzpopmax",
  "bzmpop",
  "wait",
  "waitaof",
]);
const REFUSED_CLIENT_SUBCOMMANDS = new Set(["reply", "tracking", "caching"]);

function refusal(command: ParsedCommand): string | undefined {
  const { lower, args } = command;
  if (REFUSED.has(lower)) return lower;
  if (lower === "client" && REFUSED_CLIENT_SUBCOMMANDS.has((args[0] ?? "").toLowerCase())) {
    return `client ${(args[0] ?? "").toLowerCase()}`;
  }
  if (
    (lower === "xread" || lower === "xreadgroup") &&
    args.some((a) => a.toUpperCase() === "BLOCK")
  ) {
    return `${lower} block`;
  }
  return undefined;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return value.length === 0 ? "an empty array" : "an array";
  return typeof value;
}

/** Validates one `[name, ...args]` array; `where` names it in error messages. */
export function parseCommand(value: unknown, where: string): ParsedCommand {
  if (!Array.isArray(value) || value.length === 0) {
    throw new BadRequestError(
      `ERR ${where}: expected a non-empty JSON array [command, ...args], got ${describe(value)}`,
    );
  }
  const name = value[0];
  if (typeof name !== "string" || name === "") {
    throw new BadRequestError(`ERR ${where}: the command name must be a non-empty string`);
  }
  const args: string[] = new Array(value.length - 1);
  for (let i = 1; i < value.length; i++) {
    const arg: unknown = value[i];
    if (typeof arg === "string") args[i - 1] = arg;
    else if (typeof arg === "number" || typeof arg === "boolean") args[i - 1] = String(arg);
    else {
      throw new BadRequestError(
        `ERR ${where}: argument ${i} must be a string, number or boolean, got ${describe(arg)}`,
      );
    }
  }
  const command = { name, lower: name.toLowerCase(), args };
  const refused = refusal(command);
  if (refused !== undefined) {
    throw new BadRequestError(
      `ERR command '${refused}' is not supported by the edgelock dev endpoint (as on Upstash)`,
    );
  }
  return command;
}

/** Validates a `/pipeline` or `/multi-exec` body: a non-empty array of command arrays. */
export function parseCommandList(value: unknown): ParsedCommand[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new BadRequestError(
      `ERR expected a non-empty JSON array of command arrays, got ${describe(value)}`,
    );
  }
  return value.map((entry, i) => parseCommand(entry, `command ${i}`));
}

/** Parses the request body as JSON, whatever its Content-Type says. */
export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    throw new BadRequestError("ERR the request body is not valid JSON");
  }
}
