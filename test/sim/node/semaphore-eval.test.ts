/**
 * The semaphore's scripts by EVALSHA and EVAL on the nodes the tests and the simulation run on, as
 * the lock's are (parity.test.ts "EVALSHA answers NOSCRIPT", test/testing/memory-nodes.test.ts
 * "the script cache"): a node that has not seen a script answers NOSCRIPT, EVAL caches it under
 * its SHA-1, and the library's path (`evalScript`: EVAL first, then EVALSHA, one EVAL after a
 * NOSCRIPT) works on the simulated cluster and on memory nodes. The simulated cluster also knows
 * them by name: traces, the checker's record of slot keys and of a permit call's end, mutants.
 */
import { describe, expect, it } from "vitest";
import { memoryNodes } from "../../../src/memory";
import { RestNode } from "../../../src/node";
import { evalScript, type Script, scriptKeys, semaphoreKeys } from "../../../src/scripts";
import { RELEASE_SLOTS, SEM_ACQUIRE, SEM_INSPECT } from "../../../src/scripts/semaphore";
import { SimCluster } from "../runtime/cluster";
import { WEATHERS } from "../runtime/fates";
import { SimRedis } from "../runtime/network";
import { Random } from "../runtime/random";
import { Scheduler } from "../runtime/scheduler";

const S = semaphoreKeys("lock:", "s", 2);
const T = "7".repeat(32);
/** The KEYS of a call of T over both slots in order 1, 0 (then its tombstone). */
const KEYS = scriptKeys(
  [1, 0].flatMap((j) => S.slots.slice(j, j + 1)),
  S.tombstone(T),
);
const ACQUIRE_ARGS = SEM_ACQUIRE.args({ token: T, ttl: 5_000, slots: [1, 0], eligible: 2 });
const RELEASE_ARGS = RELEASE_SLOTS.args({ token: T, slots: [1, 0], keepMs: 5_000 });
const NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL.";

function cluster(overrides: ReadonlyMap<string, string> = new Map()) {
  const scheduler = new Scheduler();
  const lines: string[] = [];
  const exact = { rate: 1, offsetMs: 0 };
  const sim = new SimCluster(scheduler, new Random(7), [exact], WEATHERS.calm, overrides, (line) =>
    lines.push(line),
  );
  return { scheduler, sim, lines };
}

describe("the simulated cluster", () => {
  it("EVALSHA answers NOSCRIPT until EVAL loaded the script; the node runs it by either", () => {
    const { scheduler, sim } = cluster();
    expect(sim.evalsha(0, SEM_ACQUIRE.sha1, KEYS, ACQUIRE_ARGS)).toEqual({
      ok: false,
      error: NOSCRIPT,
    });
    expect(sim.eval(0, SEM_ACQUIRE.lua, KEYS, ACQUIRE_ARGS)).toEqual({ ok: true, value: [1, 1] });
    // A re-send by EVALSHA finds its slot.
    expect(sim.evalsha(0, SEM_ACQUIRE.sha1, KEYS, ACQUIRE_ARGS)).toEqual({
      ok: true,
      value: [1, 1],
    });
    expect(sim.evalsha(0, RELEASE_SLOTS.sha1, KEYS, RELEASE_ARGS).ok).toBe(false);
    expect(sim.eval(0, RELEASE_SLOTS.lua, KEYS, RELEASE_ARGS)).toEqual({ ok: true, value: 1 });
    expect(sim.host(0).node.get(S.slots[1]?.lock as string)).toBeNull();
    // The checker's records: the slot held, then freed, and the call's end with its tombstone.
    const slot = S.slots[1]?.lock;
    expect(sim.keyStates.filter((k) => k.key === slot).map((k) => k.value)).toEqual([T, null]);
    // The tombstone (keepMs 5 000) is gone once the node's clock is past its deadline.
    const until = scheduler.now + 5_001;
    expect(sim.tokenEnds).toEqual([{ node: 0, at: scheduler.now, token: T, until }]);
    expect(sim.scriptName(SEM_ACQUIRE.sha1)).toBe("semaphore-acquire");
    expect(sim.scriptName(RELEASE_SLOTS.lua)).toBe("semaphore-release");
  });

  it("through the library's path: EVAL, then EVALSHA, and one EVAL after a restart's NOSCRIPT", async () => {
    const { scheduler, sim, lines } = cluster();
    const node = new RestNode(0, "n0", new SimRedis(sim, { client: 0, node: 0 }), undefined);
    const send = async (script: Script<unknown, never>, args: string[]) => {
      const reply = evalScript(node, script, KEYS, args, { timeoutMs: 1_000 });
      await scheduler.run({ until: scheduler.now + 100, maxEvents: 100 });
      return await reply;
    };
    expect(await send(SEM_ACQUIRE, ACQUIRE_ARGS)).toEqual({ granted: true, slot: 1 });
    expect(await send(SEM_ACQUIRE, ACQUIRE_ARGS)).toEqual({ granted: true, slot: 1 });
    sim.restart(0, true, 10);
    await scheduler.run({ until: scheduler.now + 50, maxEvents: 10 });
    expect(await send(SEM_ACQUIRE, ACQUIRE_ARGS)).toEqual({ granted: true, slot: 1 });
    expect(await send(RELEASE_SLOTS, RELEASE_ARGS)).toBe(1);
    const requests = lines.filter((l) => l.startsWith("c0>n0 ") && l.includes(" fate="));
    expect(requests.map((l) => l.split(" ").slice(1, 3).join(" "))).toEqual([
      "eval semaphore-acquire",
      "evalsha semaphore-acquire",
      "evalsha semaphore-acquire", // NOSCRIPT after the restart
      "eval semaphore-acquire",
      "eval semaphore-release",
    ]);
    expect(lines.some((l) => l.includes(`failed: UpstashError ${NOSCRIPT}`))).toBe(true);
  });

  it("runs a semaphore script's mutant in its place, cached under the real SHA-1", () => {
    const { sim } = cluster(new Map([[SEM_INSPECT.sha1, "return {7, 7}"]]));
    const keys = scriptKeys(S.slots);
    expect(sim.eval(0, SEM_INSPECT.lua, keys, [])).toEqual({ ok: true, value: [7, 7] });
    expect(sim.evalsha(0, SEM_INSPECT.sha1, keys, [])).toEqual({ ok: true, value: [7, 7] });
  });
});

describe("memory nodes", () => {
  it("EVALSHA of a semaphore script the node has not seen rejects with NOSCRIPT; EVAL caches it", async () => {
    const [node] = memoryNodes(1);
    if (node === undefined) throw new Error("no node");
    await expect(node.evalsha(SEM_ACQUIRE.sha1, KEYS, ACQUIRE_ARGS)).rejects.toThrow(NOSCRIPT);
    expect(await node.eval(SEM_ACQUIRE.lua, KEYS, ACQUIRE_ARGS)).toEqual([1, 1]);
    expect(await node.evalsha(SEM_ACQUIRE.sha1, KEYS, ACQUIRE_ARGS)).toEqual([1, 1]);
    await expect(node.evalsha(RELEASE_SLOTS.sha1, KEYS, RELEASE_ARGS)).rejects.toThrow(NOSCRIPT);
    expect(await node.eval(RELEASE_SLOTS.lua, KEYS, RELEASE_ARGS)).toBe(1);
    expect(await node.evalsha(RELEASE_SLOTS.sha1, KEYS, RELEASE_ARGS)).toBe(0);
    expect(node.keys()).toEqual([S.tombstone(T)]);
  });

  it("through the library's path the first EVAL lands on every node at once, and after SCRIPT FLUSH one EVAL follows the NOSCRIPT", async () => {
    const nodes = memoryNodes(3);
    const calls: string[] = [];
    for (const node of nodes) {
      const run = node.eval.bind(node);
      const runSha = node.evalsha.bind(node);
      node.eval = (...a) => {
        calls.push("eval");
        return run(...a);
      };
      node.evalsha = (...a) => {
        calls.push("evalsha");
        return runSha(...a);
      };
    }
    const rest = nodes.map((n, i) => new RestNode(i, `node${i}`, n, undefined));
    const all = (script: Script<unknown, never>, args: string[]) =>
      rest.map((r) => evalScript(r, script, KEYS, args, { timeoutMs: 1_000 }));
    const first = all(SEM_ACQUIRE, ACQUIRE_ARGS);
    // Before any reply: the library recorded the script's SHA-1, so no node waited for a digest.
    expect(nodes.map((n) => n.get(S.slots[1]?.lock as string))).toEqual([T, T, T]);
    expect(await Promise.all(first)).toEqual([0, 1, 2].map(() => ({ granted: true, slot: 1 })));
    await Promise.all(all(RELEASE_SLOTS, RELEASE_ARGS));
    expect(calls.sort()).toEqual(["eval", "eval", "eval", "eval", "eval", "eval"]);
    calls.length = 0;
    for (const node of nodes) node.flushScripts();
    expect(await Promise.all(all(RELEASE_SLOTS, RELEASE_ARGS))).toEqual([0, 0, 0]);
    expect(calls.sort()).toEqual(["eval", "eval", "eval", "evalsha", "evalsha", "evalsha"]);
    expect(nodes.map((n) => n.keys())).toEqual(nodes.map(() => [S.tombstone(T)]));
  });
});
