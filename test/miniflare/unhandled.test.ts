/**
 * No rejection left unhandled in workerd when the lock nodes answer nothing (docs/SAFETY.md §6c):
 * `unhandled.worker.ts`, bundled with esbuild and run by Miniflare, counts the isolate's
 * `unhandledrejection` events while a failed `acquire`, Hono `lock()` and `idempotency()` over
 * `lock()` (contract C12) run against closed ports, background work included.
 *
 * With verbose logging workerd also prints, for every failed subrequest, caught or not,
 * `uncaught exception; source = Uncaught (in promise); stack = Error: Network connection lost.`
 * (its own fetch internals at info level, which the workers pool shows). Those lines are not
 * unhandled rejections: a caught `fetch` prints one, a failed acquire one per refused connection,
 * and none of them fires `unhandledrejection`.
 */
import { describe, expect, it } from "vitest";
import { useDevCluster } from "../support/dev-cluster";
import { useWorker } from "./support/worker";

const dev = useDevCluster({ nodes: 3 });

const worker = useWorker(new URL("./unhandled.worker.ts", import.meta.url), () => ({
  EDGELOCK_NODES: JSON.stringify(dev.cluster.nodes),
  LOCK_PREFIX: `mf-unhandled:${crypto.randomUUID()}:`,
  REQUEST_TIMEOUT_MS: "500",
}));

interface Ran {
  readonly result: string | number;
  readonly unhandled: readonly string[];
}

async function scenario(name: string): Promise<Ran> {
  const res = await worker.mf.dispatchFetch(`http://worker.test/${name}`);
  return (await res.json()) as Ran;
}

const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

describe("workerd: no unhandled rejection when every lock node is unreachable", () => {
  it("the listener sees a deliberate unhandled rejection (it counts what it should)", async () => {
    expect(await scenario("rejection")).toEqual({
      result: "rejected",
      unhandled: ["Error: a deliberate unhandled rejection"],
    });
  });

  it("a failed acquire, lock() with an onError of 200, idempotency() over it (C12): none", async () => {
    expect(await scenario("acquire")).toEqual({ result: "QuorumError", unhandled: [] });
    expect(await scenario("lock")).toEqual({ result: 200, unhandled: [] });
    expect(await scenario("idempotency-over-lock")).toEqual({ result: 200, unhandled: [] });
  });

  it("idempotency() over a lock() whose onError throws: hono's 500, none", async () => {
    expect(await scenario("idempotency-over-lock-throws")).toEqual({
      result: 500,
      unhandled: [],
    });
  });

  it("workerd's 'Uncaught (in promise)' info line comes with every refused connection, caught or not", async () => {
    const before = worker.output().length;
    expect(await scenario("fetch")).toEqual({ result: "Error", unhandled: [] });
    const caughtFetch = worker.output().slice(before);
    const lines = /source = Uncaught \(in promise\); stack = Error: Network connection lost/g;
    const refused = /connect\(\): Connection refused/g;
    expect(count(caughtFetch, refused)).toBeGreaterThan(0);
    expect(count(caughtFetch, lines)).toBe(count(caughtFetch, refused));
    // Over every scenario so far: one line per refused connection, none more.
    expect(count(worker.output(), lines)).toBe(count(worker.output(), refused));
  });
});
