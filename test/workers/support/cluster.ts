/**
 * Helpers for tests inside workerd: the dev cluster's nodes (from the `EDGELOCK_NODES` binding the
 * global setup provided), its admin routes (faults, pause/resume, request stats; each protected by
 * the node's token), lock managers with a unique prefix per test, and a way to call a Hono app with
 * a real `ExecutionContext`.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { Hono } from "hono";
import { createLocks, type LockEvent, type Locks, type LocksOptions } from "../../../src";
import type { Fault } from "../../../src/dev/types";

/** `{ url, token }` of every dev node. */
export const nodes: { url: string; token: string }[] = JSON.parse(env.EDGELOCK_NODES);

/** Call one admin route of node `i`; returns its `result`. */
export async function admin(
  i: number,
  method: "GET" | "POST" | "DELETE",
  action: string,
  body?: unknown,
): Promise<unknown> {
  const node = nodes[i];
  if (node === undefined) throw new Error(`no node ${i}`);
  const init: RequestInit = { method, headers: { Authorization: `Bearer ${node.token}` } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(`${node.url}/__edgelock/${action}`, init);
  const json = (await res.json()) as { result?: unknown; error?: string };
  if (!res.ok) throw new Error(`admin ${method} ${action} on node ${i}: ${json.error}`);
  return json.result;
}

export const injectFault = (i: number, fault: Fault) => admin(i, "POST", "faults", fault);

/** Clear faults and resume every node (a test's `finally`). */
export async function healAll(): Promise<void> {
  await Promise.all(
    nodes.map(async (_, i) => {
      await admin(i, "POST", "resume");
      await admin(i, "DELETE", "faults");
    }),
  );
}

export const resetStats = () => Promise.all(nodes.map((_, i) => admin(i, "DELETE", "stats")));

/** HTTP requests served by all nodes since the last `resetStats()`. */
export async function totalRequests(): Promise<number> {
  const all = await Promise.all(nodes.map((_, i) => admin(i, "GET", "stats")));
  return all.reduce<number>((sum, s) => sum + (s as { requests: number }).requests, 0);
}

/** A lock manager over the dev nodes with a prefix of its own, recording its events. */
export function testLocks(options: Partial<LocksOptions> = {}): {
  locks: Locks;
  events: LockEvent[];
} {
  const events: LockEvent[] = [];
  const locks = createLocks({
    nodes,
    prefix: `t:${crypto.randomUUID()}:`,
    onEvent: (event) => events.push(event),
    ...options,
  });
  return { locks, events };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `app.fetch` with a fresh `ExecutionContext`, like the runtime does. `response` resolves when the
 * handler answered; `settled` once the `waitUntil` work (the release) is done too.
 */
export function call(
  app: Hono,
  path: string,
  init: RequestInit = { method: "POST" },
): { response: Promise<Response>; settled: Promise<void> } {
  const ctx = createExecutionContext();
  const response = Promise.resolve(
    app.fetch(new Request(`https://app.test${path}`, init), env, ctx),
  );
  const settled = response.then(() => waitOnExecutionContext(ctx));
  return { response, settled };
}

/**
 * {@link maxPttl} once the key is gone everywhere, or its last reading after `ms`: a release (or
 * cleanup) is decided by a majority, and the last node's delete may land a moment later.
 */
export async function pttlOnceGone(locks: Locks, key: string, ms = 3_000): Promise<number> {
  const until = performance.now() + ms;
  for (;;) {
    const pttl = await maxPttl(locks, key);
    if (pttl === -2 || performance.now() > until) return pttl;
    await sleep(20);
  }
}

/** The largest PTTL a node reports for `key` (−2: absent everywhere). */
export async function maxPttl(locks: Locks, key: string): Promise<number> {
  const { nodes: outcomes } = await locks.inspect(key);
  return Math.max(-2, ...outcomes.map((o) => (o.status === "held" ? (o.pttl ?? -1) : -2)));
}
