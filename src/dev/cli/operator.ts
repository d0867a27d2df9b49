/**
 * The operator commands: `edgelock inspect <key>` (what every node holds for a lock key) and
 * `edgelock force-release <key>` (delete it everywhere, whoever holds it). Nodes come from
 * `--nodes <file>`, else `EDGELOCK_NODES`, else `UPSTASH_REDIS_REST_URL` + `_TOKEN`. Output never
 * contains a token; nodes are named by index and host.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import { isConfigurationError, type NodeOutcome, reasonOf } from "../../errors";
import { checkKey, createLocks } from "../../lock";
import { type NodeCredentials, nodesFromEnv } from "../../node";
import { parse, UsageError } from "./args";

const NODE_OPTIONS = `  --prefix <p>         the lock manager's prefix (default "lock:")
  --nodes <file>       a JSON file: [{"url","token"}, …] or {"nodes":[…]} as \`edgelock dev --json\`
                       prints; default: EDGELOCK_NODES, or UPSTASH_REDIS_REST_URL + _TOKEN`;

export const INSPECT_USAGE = `Usage: edgelock inspect <key>… [options]

Shows what every node holds for a lock key: held / done / reserved / absent / failed, the time
left and the fence counter, then a summary. A lock on several keys is shown key by key: pass the
keys, or its name as errors print it ("account:1, account:2": shown key by key when no key has
that very name). Exit status 1 when a majority of nodes failed.

Options:
${NODE_OPTIONS}
  --json               one JSON object per key (TTLs in ms)
  -h, --help           show this help`;

export const FORCE_RELEASE_USAGE = `Usage: edgelock force-release <key>… [options]

Deletes a lock key on every node, whoever holds it (the holder is not told; its fence counter
stays). A lock on several keys: pass each of its keys. Every key is checked before anything is
deleted. Asks for confirmation unless --yes. Exit status 1 when a node failed.

Options:
${NODE_OPTIONS}
  -y, --yes            do not ask for confirmation (needed without a terminal)
  -h, --help           show this help`;

/** The nodes to talk to: the `--nodes` file, or the environment. */
export function loadNodes(file: string | undefined, env: NodeJS.ProcessEnv): NodeCredentials[] {
  if (file === undefined) {
    const none = env.EDGELOCK_NODES === undefined && env.UPSTASH_REDIS_REST_URL === undefined;
    if (none) {
      throw new UsageError(
        'no nodes: set EDGELOCK_NODES (JSON [{"url","token"}, …]) or UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or pass --nodes <file>',
      );
    }
    return nodesFromEnv(env);
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(
      `--nodes: cannot read ${file} (${(error as { code?: string }).code ?? "error"})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Never quote the file: it holds tokens.
    throw new UsageError(`--nodes: ${file} is not JSON; expected [{"url","token"}, …]`);
  }
  try {
    // The same shapes and checks as EDGELOCK_NODES (`[…]` or `{"nodes":[…]}`).
    return nodesFromEnv({ EDGELOCK_NODES: JSON.stringify(value) });
  } catch (error) {
    if (!isConfigurationError(error)) throw error;
    // The file is no environment variable: name it, and the entry (`nodes[1].url`) that is wrong.
    const entry = error.option.replace(/^EDGELOCK_NODES/, "");
    const reason = error.message.replace(/^invalid [^`]*`[^`]*`: /, "");
    throw new UsageError(`--nodes: ${file}${entry === "" ? "" : `: nodes${entry}`}: ${reason}`);
  }
}

/**
 * The keys named on the command line, each checked as a lock key before anything is sent (so a
 * bad key among several leaves every node untouched). Never split: a key may contain ", ".
 */
export function keysOf(positionals: string[]): string[] {
  if (positionals.length === 0) throw new UsageError("missing <key>");
  for (const key of positionals) {
    try {
      checkKey(key, false);
    } catch (error) {
      throw new UsageError(`<key> "${key}": ${(error as Error).message.replace(/^.*?: /, "")}`);
    }
  }
  return [...new Set(positionals)];
}

/**
 * A lock on several keys is named in errors as its keys joined by ", " (`LockBusyError:
 * "account:1, account:2" …`); its parts, when `name` is such a name.
 */
export function partsOf(name: string): string[] | undefined {
  const parts = name.split(", ").filter((k) => k !== "");
  return parts.length > 1 ? [...new Set(parts)] : undefined;
}

/** A duration for people: `850 ms`, `9.9 s`, `4 min 10 s`, `23 h 59 min`, `2 d 3 h`. */
export function formatMs(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const s = Math.floor(ms / 1_000);
  if (s < 3_600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3_600)} h ${Math.floor((s % 3_600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3_600)} h`;
}

const stateOf = (o: NodeOutcome): string =>
  o.status === "timeout" || o.status === "error" ? "failed" : o.reserved ? "reserved" : o.status;

function row(o: NodeOutcome, hostWidth: number, detail: string): string {
  return `  node ${o.index}  ${o.host.padEnd(hostWidth)}  ${stateOf(o).padEnd(8)}  ${detail}`.trimEnd();
}

/** Output of `inspect` for `nodes`: the lines and the exit status. */
export async function inspect(
  argv: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ out: string[]; code: number } | undefined> {
  const { values, positionals } = parse(argv, {
    prefix: { type: "string" },
    json: { type: "boolean", default: false },
    nodes: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  });
  if (values.help) return undefined;
  const keys = keysOf(positionals);
  const nodes = loadNodes(values.nodes, env);
  const prefix = values.prefix ?? "lock:";
  const locks = createLocks({ nodes, prefix });
  const out: string[] = [];
  let code = 0;
  const json = values.json === true;
  const show = (one: { out: string[]; code: number }) => {
    if (out.length > 0 && !json) out.push("");
    out.push(...one.out);
    code = Math.max(code, one.code);
  };
  for (const key of keys) {
    const one = await inspectKey(locks, key, prefix, json);
    const parts = partsOf(key);
    // A multi-key lock's name as an error printed it: no key of that name, so show its keys.
    if (parts === undefined || one.present) {
      show(one);
      continue;
    }
    if (!json) show({ out: [`no key "${key}" on any node; as the keys of one lock:`], code: 0 });
    for (const part of parts) show(await inspectKey(locks, part, prefix, json));
  }
  return { out, code };
}

async function inspectKey(
  locks: ReturnType<typeof createLocks>,
  key: string,
  prefix: string,
  json: boolean,
): Promise<{ out: string[]; code: number; present: boolean }> {
  const result = await locks.inspect(key);
  const present = result.nodes.some((o) => o.status === "held" || o.status === "done");
  const n = result.nodes.length;
  const failed = result.nodes.filter((o) => stateOf(o) === "failed").length;
  const quorum = Math.floor(n / 2) + 1;
  const code = failed > n - quorum ? 1 : 0;
  if (json) {
    const plain = result.nodes.map((o) => ({
      index: o.index,
      host: o.host,
      state: stateOf(o),
      pttl: o.pttl ?? null,
      fence: o.fence ?? null,
      ...(o.error === undefined ? {} : { error: reasonOf(o) }),
    }));
    const summary = {
      key,
      prefix,
      held: result.held,
      done: result.done,
      retryAfter: result.retryAfter ?? null,
    };
    const line = JSON.stringify({ ...summary, fence: result.fence, nodes: plain });
    return { out: [line], code, present };
  }
  const width = Math.max(...result.nodes.map((o) => o.host.length));
  const out = [`lock "${key}" (prefix "${prefix}") on ${n} node(s)`];
  for (const o of result.nodes) {
    const parts: string[] = [];
    if (stateOf(o) === "failed") parts.push(reasonOf(o) ?? "failed");
    else if (o.pttl !== undefined)
      parts.push(o.pttl === -1 ? "no expiry" : `ttl ${formatMs(o.pttl)}`);
    if (o.fence !== undefined && o.fence > 0) parts.push(`fence ${o.fence}`);
    out.push(row(o, width, parts.join("  ")));
  }
  const count = (state: string) => result.nodes.filter((o) => stateOf(o) === state).length;
  const held = count("held") + count("reserved");
  const retry = result.retryAfter === undefined ? "?" : formatMs(result.retryAfter);
  out.push(
    result.done
      ? `done on ${count("done")} of ${n} nodes: its once() job or request finished`
      : result.held
        ? `held on ${held} of ${n} nodes (a majority), free in at most ${retry}`
        : code === 1
          ? `unknown: ${failed} of ${n} nodes failed, no majority answered`
          : held === 0
            ? failed === 0
              ? `free on all ${n} nodes`
              : `free: absent on every node that answered (${failed} failed)`
            : `free: held on ${held} of ${n} nodes, not a majority (${
                result.nodes.some((o) => o.status === "held" && o.pttl === -1)
                  ? "no expiry: only force-release removes it"
                  : "it expires with its TTL"
              })`,
  );
  return { out, code, present };
}

/** Output of `force-release`: the lines and the exit status (asks on a TTY unless --yes). */
export async function forceRelease(
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: { readonly isTTY: boolean; ask(question: string): Promise<string> },
): Promise<{ out: string[]; code: number } | undefined> {
  const { values, positionals } = parse(argv, {
    prefix: { type: "string" },
    yes: { type: "boolean", short: "y", default: false },
    nodes: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  });
  if (values.help) return undefined;
  const keys = keysOf(positionals);
  const nodes = loadNodes(values.nodes, env);
  const prefix = values.prefix ?? "lock:";
  if (!values.yes) {
    if (!io.isTTY) throw new UsageError("no terminal to confirm on: pass --yes to force-release");
    const named = keys.map((k) => `"${k}"`).join(", ");
    const answer = await io.ask(
      `Delete lock ${named} (prefix "${prefix}") on ${nodes.length} node(s), whoever holds it? [y/N] `,
    );
    if (!/^y(es)?$/i.test(answer.trim())) return { out: ["aborted: nothing deleted"], code: 1 };
  }
  const locks = createLocks({ nodes, prefix });
  const out: string[] = [];
  let code = 0;
  for (const key of keys) {
    if (out.length > 0) out.push("");
    const result = await locks.forceRelease(key);
    const width = Math.max(...result.outcomes.map((o) => o.host.length));
    out.push(`force-release lock "${key}" (prefix "${prefix}")`);
    for (const o of result.outcomes) {
      const what =
        o.status === "ok"
          ? "deleted"
          : o.status === "absent"
            ? "absent (nothing to delete)"
            : (reasonOf(o) ?? "failed");
      out.push(`  node ${o.index}  ${o.host.padEnd(width)}  ${what}`);
    }
    const failed = result.outcomes.filter(
      (o) => o.status === "timeout" || o.status === "error",
    ).length;
    out.push(
      `deleted on ${result.deleted} of ${nodes.length} nodes${failed > 0 ? `; ${failed} failed: the key may remain there until its TTL` : ""}`,
    );
    if (failed > 0) code = 1;
  }
  return { out, code };
}

/** The terminal prompt for {@link forceRelease}. */
export async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}
