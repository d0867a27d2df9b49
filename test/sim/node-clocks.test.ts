/**
 * The simulated nodes' own clocks (`runtime/node-clock.ts`): a node's keys expire by its clock,
 * which a restart does not touch, TIME reads it, and the checker sees its deadlines in virtual
 * time. And why their rates are bounded (`CLOCK_RATE_SPREAD` in `workload/clocks.ts`): a client
 * clock 1% slow against node clocks 1% fast — each within `driftFactor` of real time, together
 * twice it — lets a second caller in while the first is still valid (docs/SAFETY.md E2 needs the
 * pair within `driftFactor`); at the simulation's bound, half the factor each, the same schedule
 * is safe.
 */
import { describe, expect, it } from "vitest";
import { SimNode } from "../../src/memory";
import { sha1 } from "./node/sha1";
import { runSchedule } from "./run";
import { SimCluster } from "./runtime/cluster";
import { WEATHERS } from "./runtime/fates";
import { NodeClock } from "./runtime/node-clock";
import { Random } from "./runtime/random";
import { EPOCH, Scheduler } from "./runtime/scheduler";
import { CLOCK_RATE_SPREAD, DRIFT_FACTOR } from "./workload/clocks";
import type { OpSpec, ScheduleSpec } from "./workload/spec";

/** A node on a clock of `rate` with a key set with PX `ms` at virtual time EPOCH + 0.4. */
function nodeWithKey(rate: number, ms: number) {
  const scheduler = new Scheduler();
  const clock = new NodeClock(scheduler, { rate, offsetMs: -7_000 });
  const node = new SimNode({ now: () => clock.now(), sha1 });
  scheduler.now = EPOCH + 0.4;
  node.set("k", "v", ms);
  const when = clock.now() + ms;
  return { scheduler, clock, node, goneAt: clock.goneAt(when) };
}

describe("a simulated node's clock", () => {
  it.each([1.005, 0.995, 1])("at rate %d, keys expire by it", (rate) => {
    const { scheduler, node, goneAt } = nodeWithKey(rate, 1_000);
    // 1 000 node ms (plus the part of a millisecond the floored reading hides) in virtual time.
    expect(goneAt - EPOCH).toBeGreaterThan(1_000 / rate);
    expect(goneAt - EPOCH).toBeLessThanOrEqual(1_001.4 / rate);
    scheduler.now = goneAt - 0.01;
    expect(node.get("k")).toBe("v");
    scheduler.now = goneAt + 0.01;
    expect(node.get("k")).toBeNull();
  });

  it("reads whole milliseconds from its own epoch offset", () => {
    const { scheduler, clock, node } = nodeWithKey(1.005, 1_000);
    scheduler.now = EPOCH + 200.7;
    expect(clock.now()).toBe(EPOCH - 7_000 + Math.floor(200.7 * 1.005));
    expect(Number.isInteger(node.pttl("k"))).toBe(true);
    const reply = node.eval("return redis.call('TIME')", [], []);
    const ms = clock.now();
    expect(reply).toEqual({
      ok: true,
      value: [String(Math.floor(ms / 1_000)), String((ms % 1_000) * 1_000)],
    });
  });

  it("keeps running through a restart (no jump): the key kept expires when it would have", async () => {
    const scheduler = new Scheduler();
    const clocks = [{ rate: 1.004, offsetMs: 12_345 }];
    const cluster = new SimCluster(scheduler, new Random(1), clocks, WEATHERS.calm);
    const { node, clock } = cluster.host(0);
    node.set("k", "v", 1_000);
    const goneAt = clock.goneAt(clock.now() + 1_000);
    const readings: number[] = [];
    for (let t = 0; t <= 1_200; t += 100) scheduler.after(t, () => readings.push(clock.now()));
    scheduler.after(300, () => cluster.restart(0, true, 400));
    await scheduler.run({ until: EPOCH + 2_000, maxEvents: 100 });
    expect(readings.slice(1).map((r, i) => r - (readings[i] as number))).toEqual(
      readings.slice(1).map((_, i) => Math.floor((i + 1) * 100.4) - Math.floor(i * 100.4)),
    );
    scheduler.now = goneAt - 0.01;
    expect(node.get("k")).toBe("v");
    scheduler.now = goneAt + 0.01;
    expect(node.get("k")).toBeNull();
  });

  it("the campaign's rates: a slow client against a fast node stays within driftFactor", () => {
    const worst = (1 - CLOCK_RATE_SPREAD) / (1 + CLOCK_RATE_SPREAD);
    expect(worst).toBeGreaterThanOrEqual(1 - DRIFT_FACTOR);
  });
});

/**
 * A holder on a 30 s lease whose client clock runs at `client`, the nodes' clocks at `node`; a
 * polling caller of another instance waits for the key from 100 ms on.
 */
const holderAndWaiter = (client: number, node: number): ScheduleSpec => ({
  seed: 5,
  nodes: 3,
  weather: "calm",
  restarts: "none",
  fencing: false,
  keys: 1,
  nodeRates: [node, node, node],
  instances: [
    {
      wake: false,
      rate: client,
      callers: [
        {
          start: 0,
          ops: [
            {
              kind: "acquire",
              key: 0,
              wait: 0,
              lease: 30_000,
              hold: 32_000,
              autoExtend: false,
              end: "release",
            },
          ],
        },
      ],
    },
    {
      wake: false,
      rate: 1,
      callers: [
        {
          start: 100,
          ops: [
            {
              kind: "acquire",
              key: 0,
              wait: 40_000,
              lease: 1_000,
              hold: 100,
              autoExtend: false,
              end: "release",
            },
          ],
        },
      ],
    },
  ],
});

/** The waiter's acquire (one op) of a {@link holderAndWaiter} spec, to copy. */
const onlyOp = (spec: ScheduleSpec) => spec.instances[1]?.callers[0]?.ops[0] as OpSpec;

describe("node clock rates against drift(T) (docs/SAFETY.md A1, E2)", () => {
  it("a client 1% slow, nodes 1% fast: the keys expire before the holder's validity ends (overlap)", async () => {
    const { verdict } = await runSchedule(holderAndWaiter(1 - DRIFT_FACTOR, 1 + DRIFT_FACTOR));
    expect(verdict.grants).toBe(2);
    expect(verdict.bugs.map((b) => b.property)).toContain("overlap");
  });

  it("a client and nodes at the simulation's bound (half the factor each, opposite ways): safe", async () => {
    const spread = CLOCK_RATE_SPREAD;
    const { verdict } = await runSchedule(holderAndWaiter(1 - spread, 1 + spread));
    expect(verdict.grants).toBe(2);
    expect(verdict.bugs).toEqual([]);
  });

  it("replays exactly with drifting node clocks (same spec, same trace)", async () => {
    const spec = { ...holderAndWaiter(0.996, 1.003), nodeRates: [1.003, 0.997, 1.001] };
    const first = await runSchedule(spec, { trace: true });
    const second = await runSchedule(spec, { trace: true });
    expect(first.trace?.length).toBeGreaterThan(1);
    expect(second.trace).toEqual(first.trace);
    expect(second.events).toBe(first.events);
  });

  it("nodes a tenth of a percent faster than the bound: overlap again (the bound is tight)", async () => {
    const spread = CLOCK_RATE_SPREAD;
    const spec = holderAndWaiter(1 - spread, 1 + spread + 0.001);
    // The nodes drop the holder's token ~26 ms before its validity ends (~29,821 ms against
    // ~29,847 ms). The queued waiter refreshes only every retryDelayMax, so a caller arriving in
    // that window (wait 0) frees nothing but finds the key free: the nodes hand it to the waiter
    // (or grant it), inside the holder's validity.
    const arrival = {
      wake: false,
      rate: 1,
      callers: [{ start: 29_826, ops: [{ ...onlyOp(spec), wait: 0, hold: 10 }] }],
    };
    const { verdict } = await runSchedule({ ...spec, instances: [...spec.instances, arrival] });
    expect(verdict.bugs.map((b) => b.property)).toContain("overlap");
  });
});
