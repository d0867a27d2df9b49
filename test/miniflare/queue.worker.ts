/**
 * A Worker of independent waiters for `queue.test.ts` (bundled with esbuild and run by Miniflare in
 * workerd): every request builds its own `Locks`, as a request of another isolate would, and waits
 * for one key in the nodes' queues.
 *
 * It wraps `globalThis.fetch` (which `@upstash/redis` calls for every command and stream) to count
 * the fetches **waiting for their response headers**: the six simultaneous connections Workers
 * allow per request count exactly those (an open SSE stream whose headers arrived does not), and
 * workerd does not enforce the limit locally, so the Worker measures it itself. The counter is the
 * isolate's; the test runs one measured request at a time, so its peak is that request's.
 *
 * Routes:
 * - `POST /wait/:key?wait=&lease=&hold=`: acquire (waiting up to `wait`), hold `hold` ms, release;
 *   answers `{ status, order, attempt, peak, atPeak, events }`.
 * - `POST /abandon/:key?wait=`: start a waiting acquire, answer once it waits in the queues (its
 *   first look refused and `settle` ms more), without `waitUntil`: the request's context ends
 *   while the acquire still waits.
 * - `GET /peak`: the counter's state; `DELETE /peak`: reset it.
 *
 * @module
 */
import { createLocks, type LockEvent } from "../../src";
import { nodesFromEnv } from "../../src/adapters/workers";
import { SCRIPTS } from "../../src/scripts";

interface Env {
  readonly EDGELOCK_NODES: string;
  readonly LOCK_PREFIX: string;
  readonly REQUEST_TIMEOUT_MS: string;
  /** Refresh period of a waiter (`retryDelayMax`), ms. */
  readonly CHECK_EVERY_MS: string;
}

/** One fetch, from its call to its headers (or its failure). */
interface Pending {
  readonly what: string;
  readonly since: number;
}

const pending = new Set<Pending>();
let peak = 0;
/** What was waiting for headers when the peak was reached. */
let atPeak: string[] = [];
/** Every moment more than five fetches waited for headers (the sets, in order). */
let crowds: string[][] = [];
/** Grants so far, in the order they were made (the test's order of calls is its own). */
let grants = 0;

/** A script's name by its source and by its SHA-1. */
const scriptNames = new Map(
  SCRIPTS.flatMap((s) => [[s.lua, s.name] as const, [s.sha1, s.name] as const]),
);

/** What a fetch is, for the report: `<port> subscribe`, or `<port> <script name>`. */
function describe(input: RequestInfo | URL, init: RequestInit | undefined): string {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const port = url.port;
  if (url.pathname.startsWith("/subscribe/")) return `${port} subscribe`;
  try {
    const body = JSON.parse(String(init?.body ?? "[]")) as unknown[];
    return `${port} ${scriptNames.get(String(body[1])) ?? String(body[0])}`;
  } catch {
    return `${port} ${url.pathname}`;
  }
}

const original = globalThis.fetch;
globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const entry = { what: describe(input, init), since: performance.now() };
  pending.add(entry);
  if (pending.size > 5) crowds.push([...pending].map((p) => p.what));
  if (pending.size > peak) {
    peak = pending.size;
    atPeak = [...pending].map((p) => p.what);
  }
  try {
    // Resolves with the headers: a stream's body is still being read after this.
    return await original(input, init);
  } finally {
    pending.delete(entry);
  }
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function locksOf(env: Env, events: LockEvent[]) {
  return createLocks({
    nodes: nodesFromEnv(env),
    prefix: env.LOCK_PREFIX,
    requestTimeout: Number(env.REQUEST_TIMEOUT_MS),
    retryDelayMax: Number(env.CHECK_EVERY_MS),
    onEvent: (event) => events.push(event),
  });
}

const summary = (events: readonly LockEvent[]) =>
  events.map((e) => (e.type === "acquire" ? `acquire ${e.result} ${e.attempt}` : e.type));

async function wait(key: string, query: URLSearchParams, env: Env): Promise<Response> {
  const events: LockEvent[] = [];
  const locks = locksOf(env, events);
  const lease = Number(query.get("lease") ?? 10_000);
  try {
    const lock = await locks.acquire(key, { wait: Number(query.get("wait") ?? 10_000), lease });
    const order = ++grants;
    const granted = events.find((e) => e.type === "acquire" && e.result === "granted");
    await sleep(Number(query.get("hold") ?? 0));
    const released = await lock.release();
    return Response.json({
      status: released.status,
      order,
      attempt: granted?.type === "acquire" ? granted.attempt : -1,
      peak,
      atPeak,
      crowds,
      events: summary(events),
    });
  } catch (error) {
    const name = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return Response.json({ status: name, peak, atPeak, events: summary(events) });
  }
}

async function abandon(key: string, query: URLSearchParams, env: Env): Promise<Response> {
  const events: LockEvent[] = [];
  const locks = locksOf(env, events);
  // Neither awaited nor given to waitUntil: it dies with this request.
  const waiting = locks.acquire(key, { wait: Number(query.get("wait") ?? 10_000) });
  waiting.then(
    (lock) => lock.release(),
    () => {},
  );
  for (let i = 0; i < 400 && events.length === 0; i++) await sleep(10);
  await sleep(Number(query.get("settle") ?? 200));
  return Response.json({ events: summary(events) });
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const [, route, key] = url.pathname.split("/");
    if (route === "peak" && request.method === "DELETE") {
      peak = 0;
      atPeak = [];
      crowds = [];
      return Response.json({ pending: pending.size });
    }
    if (route === "peak") return Response.json({ peak, atPeak, pending: pending.size });
    if (key === undefined) return new Response("no key", { status: 404 });
    if (route === "wait") return wait(key, url.searchParams, env);
    if (route === "abandon") return abandon(key, url.searchParams, env);
    return new Response("not found", { status: 404 });
  },
};
