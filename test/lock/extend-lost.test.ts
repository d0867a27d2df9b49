/**
 * An extension round that the handle's loss outlived (docs/SAFETY.md §3 "extend, lost"; the
 * simulation's regression `x-extend-outlived-loss`): the EXTEND requests run on the nodes after
 * the abort timer moved the handle to `lost`, so the nodes keep the token for the new TTL while
 * nobody holds it. The handle releases it at its old validity end V (not before: work in flight
 * may still land until then): the token is gone from every node, and a second client gets the
 * key at once. Real
 * redis-servers through the REST endpoint, the EXTENDs held back by the endpoint's latency fault.
 */
import { describe, expect, it } from "vitest";
import { createLocks, isLockLostError, type LockEvent } from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { eventually, readBack, resetCluster, sleep, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 3 });

describe("an extension answered after the lock was lost", () => {
  it("releases the token it extended: nobody waits out a TTL that nobody holds", async () => {
    const { cluster } = dev;
    const prefix = uniquePrefix("extend-lost");
    const events: LockEvent[] = [];
    // requestTimeout 500 and lease 1 s: the abort timer fires 250 ms (a quarter) before V.
    const locks = createLocks({
      nodes: cluster.nodes,
      prefix,
      requestTimeout: 500,
      onEvent: (e) => events.push(e),
    });
    const holder = await locks.acquire("k", { lease: 1_000 });
    await holder.extend(); // loads EXTEND on every node: the delayed request is the EVALSHA itself
    // Send the extension 450 ms before V, and let every node run it 350 ms later: after the abort.
    await sleep(Math.max(0, holder.validUntil - Date.now() - 450));
    for (const control of cluster.controls) {
      control.inject({ kind: "latency", ms: 350, command: "evalsha", count: 1 });
    }
    const error = await holder.extend(10_000).catch((e: unknown) => e);
    resetCluster(cluster);
    expect(isLockLostError(error), String(error)).toBe(true);
    expect(holder.signal.aborted).toBe(true);
    // The extension ran (the round answered "extended"), and the loss came before its answer.
    const kinds = events.map((e) => (e.type === "extend" ? `extend:${e.result}` : e.type));
    expect(kinds.slice(kinds.indexOf("lost"))).toContain("extend:extended");
    // Not released before V: the nodes keep the token just extended to 10 s…
    const key = `${prefix}k`;
    expect(await readBack(dev, 3, key)).toEqual([holder.token, holder.token, holder.token]);
    // …and at V it is gone from every node (long before those 10 s), not before V.
    await eventually(async () => (await readBack(dev, 3, key)).every((v) => v === null));
    expect(Date.now()).toBeGreaterThanOrEqual(holder.validUntil);
    const other = createLocks({ nodes: cluster.nodes, prefix });
    const next = await other.acquire("k", { wait: 0 });
    // The holder's own release afterwards finds nothing of its own and says so.
    expect((await holder.release()).status).toBe("expired");
    expect(await readBack(dev, 3, key)).toEqual([next.token, next.token, next.token]);
    expect((await next.release()).status).toBe("released");
  });
});
