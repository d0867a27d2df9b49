/**
 * The README's Workers pattern, as its own Worker for `shared-locks.test.ts` (bundled with esbuild
 * and run by Miniflare in workerd): one `Locks` per env, shared by every request the isolate serves
 * (a module-level `WeakMap`), behind Hono `lock()` with its defaults.
 *
 * `POST /jobs/:id?burst=<b>&of=<n>`: the lock holder keeps the lock until the other `n − 1`
 * requests of burst `b` have answered (or 20 s passed), so a holder holds across its whole burst
 * whatever the machine's speed. It learns that from a counter that every answer raises: a plain
 * number read on its own timer, never a promise of another request.
 *
 * @module
 */
import { Hono } from "hono";
import { createLocks, type Locks } from "../../src";
import { lock } from "../../src/adapters/hono";
import { nodesFromEnv } from "../../src/adapters/workers";

interface Env {
  readonly EDGELOCK_NODES: string;
  readonly LOCK_PREFIX: string;
  /** Per-node request timeout, ms: room for a loaded test machine. */
  readonly REQUEST_TIMEOUT_MS: string;
}

const locksByEnv = new WeakMap<Env, Locks>();

function locksFor(env: Env): Locks {
  let locks = locksByEnv.get(env);
  if (locks === undefined) {
    locks = createLocks({
      nodes: nodesFromEnv(env),
      prefix: env.LOCK_PREFIX,
      requestTimeout: Number(env.REQUEST_TIMEOUT_MS),
    });
    locksByEnv.set(env, locks);
  }
  return locks;
}

/** Answers given so far, per burst (status 200 excluded: the holder's own answer). */
const answered = new Map<string, number>();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const app = new Hono<{ Bindings: Env }>();

app.use("/jobs/*", async (c, next) => {
  await next();
  if (c.res.status === 200) return;
  const burst = c.req.query("burst") ?? "";
  answered.set(burst, (answered.get(burst) ?? 0) + 1);
});

app.post(
  "/jobs/:id",
  lock({ locks: (c) => locksFor(c.env), key: (c) => `job:${c.req.param("id")}` }),
  async (c) => {
    const burst = c.req.query("burst") ?? "";
    const others = Number(c.req.query("of") ?? "1") - 1;
    const until = Date.now() + 20_000;
    while ((answered.get(burst) ?? 0) < others && Date.now() < until) await sleep(10);
    return c.json({ held: true, others: answered.get(burst) ?? 0 });
  },
);

/** Whether the key is free on every node (no lock, no reservation), for the test's pacing. */
app.get("/free/:id", async (c) => {
  const { nodes } = await locksFor(c.env).inspect(`job:${c.req.param("id")}`);
  return c.json({ free: nodes.every((n) => n.status === "absent") });
});

export default app;
