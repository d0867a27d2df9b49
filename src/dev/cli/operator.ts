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
import { createLocks, type NodeCredentials, type NodeOutcome, nodesFromEnv } from "../../index";
import { reasonOf } from "../../quorum/report";
import { parse, UsageError } from "./args";

export const INSPECT_USAGE = `Usage: edgelock inspect <key> [--prefix <p>] [--json] [--nodes <file>]

Shows what every node holds for a lock key: held / done / reserved / absent / failed, the TTL
left and the fence counter, then a summary. Exit status 1 when a majority of nodes failed.`;

export const FORCE_RELEASE_USAGE = `Usage: edgelock force-release <key> [--prefix <p>] [--yes] [--nodes <file>]

Deletes a lock key on every node, whoever holds it (the holder is not told; its fence counter
stays). Asks for confirmation unless --yes. Exit status 1 when a node failed.`;

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
  const list = (value as { nodes?: unknown } | null)?.nodes ?? value;
  return nodesFromEnv({ EDGELOCK_NODES: JSON.stringify(list) });
}

function keyOf(positionals: string[]): string {
  const [key, ...rest] = positionals;
  if (key === undefined) throw new UsageError("missing <key>");
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  return key;
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
  const key = keyOf(positionals);
  const nodes = loadNodes(values.nodes, env);
  const prefix = values.prefix ?? "lock:";
  const result = await createLocks({ nodes, prefix }).inspect(key);
  const failed = result.nodes.filter((o) => stateOf(o) === "failed").length;
  const quorum = Math.floor(nodes.length / 2) + 1;
  const code = failed > nodes.length - quorum ? 1 : 0;
  if (values.json) {
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
    return { out: [JSON.stringify({ ...summary, fence: result.fence, nodes: plain })], code };
  }
  const width = Math.max(...result.nodes.map((o) => o.host.length));
  const out = [`lock "${key}" (prefix "${prefix}") on ${nodes.length} node(s)`];
  for (const o of result.nodes) {
    const parts: string[] = [];
    if (stateOf(o) === "failed") parts.push(reasonOf(o) ?? "failed");
    else if (o.pttl !== undefined) parts.push(o.pttl === -1 ? "no expiry" : `ttl ${o.pttl} ms`);
    if (o.fence !== undefined && o.fence > 0) parts.push(`fence ${o.fence}`);
    out.push(row(o, width, parts.join("  ")));
  }
  const count = (state: string) => result.nodes.filter((o) => stateOf(o) === state).length;
  const held = count("held") + count("reserved");
  const summary = result.done
    ? `done on ${count("done")} of ${nodes.length} nodes: its once() job or request finished`
    : result.held
      ? `held on ${held} of ${nodes.length} nodes (a majority), free in at most ${result.retryAfter ?? "?"} ms`
      : code === 1
        ? `unknown: ${failed} of ${nodes.length} nodes failed, no majority answered`
        : `free: held on ${held} of ${nodes.length} nodes, no majority`;
  out.push(summary);
  return { out, code };
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
  const key = keyOf(positionals);
  const nodes = loadNodes(values.nodes, env);
  const prefix = values.prefix ?? "lock:";
  if (!values.yes) {
    if (!io.isTTY) throw new UsageError("no terminal to confirm on: pass --yes to force-release");
    const answer = await io.ask(
      `Delete lock "${key}" (prefix "${prefix}") on ${nodes.length} node(s), whoever holds it? [y/N] `,
    );
    if (!/^y(es)?$/i.test(answer.trim())) return { out: ["aborted: nothing deleted"], code: 1 };
  }
  const result = await createLocks({ nodes, prefix }).forceRelease(key);
  const width = Math.max(...result.outcomes.map((o) => o.host.length));
  const out = [`force-release lock "${key}" (prefix "${prefix}")`];
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
  return { out, code: failed > 0 ? 1 : 0 };
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
