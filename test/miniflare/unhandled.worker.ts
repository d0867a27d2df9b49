/**
 * A Worker for `unhandled.test.ts` (bundled with esbuild, run by Miniflare in workerd): each
 * request runs one scenario against lock nodes that answer nothing (a closed port), inside its
 * own live request context, waits until the background work it started (failed rounds'
 * discards, releases handed to `waitUntil`, each bounded by the request timeout) had time to
 * settle, and answers what the scenario returned plus every `unhandledrejection` the isolate saw
 * meanwhile. Requests are sent one at a time, so the events are the scenario's own.
 *
 * - `/rejection`: a deliberate unhandled rejection (the listener counts what it should);
 * - `/fetch`: one caught `fetch` to the closed port (what workerd logs for any failed subrequest);
 * - `/acquire`: `acquire(key, { wait: 0 })`, caught;
 * - `/lock`: Hono `lock()` whose `onError` answers 200;
 * - `/idempotency-over-lock`: `idempotency()` (on the dev nodes) over that `lock()` (contract C12);
 * - `/idempotency-over-lock-throws`: the same with an `onError` that throws the error.
 *
 * @module
 */
import { type ExecutionContext, Hono } from "hono";
import { createLocks, type Locks } from "../../src";
import { idempotency, lock } from "../../src/adapters/hono";
import { nodesFromEnv } from "../../src/adapters/workers";

interface Env {
  readonly EDGELOCK_NODES: string;
  readonly LOCK_PREFIX: string;
  /** Per-node request timeout of both managers, ms. */
  readonly REQUEST_TIMEOUT_MS: string;
}

const CLOSED = ["http://127.0.0.1:9", "http://127.0.0.2:9", "http://127.0.0.3:9"];

const unhandled: string[] = [];
addEventListener("unhandledrejection", (event) => {
  const { reason } = event as PromiseRejectionEvent;
  unhandled.push(reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason));
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Nodes that answer nothing: every acquire is a `QuorumError` (made per request: random ids). */
function unreachable(env: Env): Locks {
  const timeout = Number(env.REQUEST_TIMEOUT_MS);
  const nodes = CLOSED.map((url) => ({ url, token: "closed-port-token" }));
  return createLocks({ nodes, requestTimeout: timeout });
}

function app(env: Env, throws: boolean): Hono {
  const healthy = createLocks({
    nodes: nodesFromEnv(env),
    prefix: env.LOCK_PREFIX,
    requestTimeout: Number(env.REQUEST_TIMEOUT_MS),
  });
  const down = unreachable(env);
  const inner = lock({
    locks: () => down,
    key: () => `inner:${crypto.randomUUID()}`,
    onError: (c, error) => {
      if (throws) throw error;
      return c.text("come back later", 200);
    },
    onUnavailable: () => undefined,
  });
  const hono = new Hono();
  hono.post("/lock", inner, (c) => c.text("ran", 201));
  hono.post("/charge", idempotency({ locks: healthy }), inner, (c) => c.text("ran", 201));
  return hono;
}

async function run(scenario: string, env: Env, ctx: ExecutionContext): Promise<string | number> {
  const post = (path: string) =>
    new Request(`https://app.test${path}`, {
      method: "POST",
      headers: { "Idempotency-Key": crypto.randomUUID(), "content-type": "application/json" },
      body: "{}",
    });
  switch (scenario) {
    case "rejection":
      void Promise.reject(new Error("a deliberate unhandled rejection"));
      return "rejected";
    case "fetch":
      return fetch(`${CLOSED[0]}/`).then(
        (res) => res.status,
        (error: Error) => error.name,
      );
    case "acquire":
      return unreachable(env)
        .acquire("k", { wait: 0 })
        .then(
          () => "granted",
          (error: Error) => error.name,
        );
    case "lock":
    case "idempotency-over-lock":
    case "idempotency-over-lock-throws": {
      const path = scenario === "lock" ? "/lock" : "/charge";
      const res = await app(env, scenario.endsWith("throws")).fetch(post(path), env, ctx);
      await res.arrayBuffer();
      return res.status;
    }
    default:
      return "unknown scenario";
  }
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    unhandled.length = 0;
    const scenario = new URL(request.url).pathname.slice(1);
    const result = await run(scenario, env, ctx);
    // Background work (discards, settled releases) is bounded by the request timeout: twice it.
    await sleep(2 * Number(env.REQUEST_TIMEOUT_MS));
    return Response.json({ result, unhandled: unhandled.splice(0) });
  },
};
