/**
 * The blocked-by-nobody property (`check/properties.ts`, docs/SAFETY.md L3) on a granted round's
 * plain release (no room service, so no tombstone). The simulated nodes record that release as
 * the end of the round's token, bounded like a DISCARD whose tombstone lived the round's TTL T:
 * a late request of the round running more than T after the end places the token whatever the
 * end wrote (L3's stated exception), and within T it still counts. The shape is the campaign's at
 * seed 20261144 (`--path 1124:5:…`): on 3 nodes two granted rounds each have one ACQUIRE that
 * timed out on the client and runs long after the round's release, on two different nodes, and
 * the two tokens overlap. The nodes' clocks have offsets of their own, as in the simulation.
 * Since the library writes the token's tombstone with the release where a request of the round
 * went unheard, such a release is recorded as ending the token for the tombstone's life (as a
 * DISCARD): the late requests then place nothing, and without the tombstone (mutant) they count.
 */
import { describe, expect, it } from "vitest";
import { ACQUIRE, RELEASE } from "../../src/scripts";
import { checkSchedule } from "./check/properties";
import { MUTANTS } from "./mutants";
import { SimCluster } from "./runtime/cluster";
import { WEATHERS } from "./runtime/fates";
import { Random } from "./runtime/random";
import { EPOCH, Scheduler } from "./runtime/scheduler";

const T = 254;
const A = "7fc3a93e68925671b9df4bbd2f2deecc";
const B = "767da3bfff93fd4d2ce74c170c9ec7b9";
const triple = ["sim:k1", "sim:k1:fence", "sim:k1:wait"];

/**
 * Round A placed on nodes 0 and 1, round B on 1 and 2, each granted and released on every node;
 * then A's late ACQUIRE runs on node 2 at `lateA` and B's on node 0 at `lateB` (ms after the start).
 */
function twoLateRounds(
  lateA: number,
  lateB: number,
  tombstones: { overrides?: ReadonlyMap<string, string> } | undefined = undefined,
) {
  const scheduler = new Scheduler();
  const clocks = [25_735, -23_743, 10_174].map((offsetMs) => ({ rate: 1, offsetMs }));
  const overrides = tombstones?.overrides ?? new Map<string, string>();
  const cluster = new SimCluster(scheduler, new Random(1), clocks, WEATHERS.calm, overrides);
  const steps: Array<[number, () => void]> = [];
  const acquire = (at: number, node: number, token: string) =>
    steps.push([
      at,
      () => {
        const args = ACQUIRE.args({ token, ttl: T, fencing: false });
        cluster.eval(node, ACQUIRE.lua, [...triple, `sim:k1:void:${token}`], args);
      },
    ]);
  const release = (at: number, token: string) =>
    steps.push([
      at,
      () => {
        for (const node of [0, 1, 2]) {
          // With tombstones: the release of a round whose requests went unheard (L3).
          const keys = tombstones ? [...triple, `sim:k1:void:${token}`] : triple;
          const keepMs = tombstones ? T : undefined;
          cluster.eval(node, RELEASE.lua, keys, RELEASE.args({ token, keepMs }));
        }
      },
    ]);
  acquire(0, 0, A);
  acquire(0, 1, A);
  release(80, A);
  acquire(100, 1, B);
  acquire(100, 2, B);
  release(200, B);
  acquire(lateA, 2, A);
  acquire(lateB, 0, B);
  for (const [at, step] of steps.sort((x, y) => x[0] - y[0])) {
    scheduler.now = EPOCH + at;
    step();
  }
  const verdict = checkSchedule({
    observed: {
      grants: [],
      owner: new Map(),
      waits: [],
      jobs: [],
      idempotentRuns: [],
      idempotentAnswers: [],
      problems: [],
      permits: [],
      soloGrants: new Set(),
      resumes: new Set(),
    },
    resource: {},
    wipes: [],
    remaining: [],
    faultFree: false,
    livenessSlack: 0,
    queueIdle: 0,
    skew: () => 0,
    nodeHistory: {
      states: cluster.keyStates,
      ends: cluster.tokenEnds,
      quorum: 2,
      nodes: 3,
      prefix: "sim:",
    },
  });
  return { cluster, found: verdict.bugs.filter((b) => b.property === "blocked-by-nobody") };
}

describe("blocked-by-nobody after a granted round's plain release", () => {
  it("records the release's end as the round's TTL after it, on the node's clock", () => {
    const { cluster } = twoLateRounds(1_000, 1_100);
    const ends = cluster.tokenEnds.filter((e) => e.token === A);
    expect(ends.map((e) => e.node)).toEqual([0, 1, 2]);
    // Like a tombstone set with PX T at the release: gone once the node's clock passes T after it.
    for (const end of ends) expect(end.until - end.at).toBe(T + 1);
  });

  it("finds nothing when the late requests run more than T after the releases (L3's exception)", () => {
    // A on node 2 from 1,000 to 1,255, B on node 0 from 1,100: both on a majority for 155 ms.
    const { cluster, found } = twoLateRounds(1_000, 1_100);
    const late = cluster.keyStates.filter((s) => s.at >= EPOCH + 1_000 && s.value !== null);
    expect(late.map((s) => [s.node, s.value])).toEqual([
      [2, A],
      [0, B],
    ]);
    expect(found).toEqual([]);
  });

  it("still finds late requests that run within T after the releases", () => {
    // A on node 2 from 250 until gone at 505 (T + 1 ms later), B on node 0 from 300.
    const { found } = twoLateRounds(250, 300);
    expect(found).toHaveLength(1);
    expect(found[0]?.detail).toContain("(nodes 0, 2), for 205 ms from");
  });

  it("counts a placement on the release's last millisecond, not the one after it", () => {
    // A's release ran on node 2 at 80: T later (334) it still counts, at 335 it does not.
    expect(twoLateRounds(80 + T, 300).found).toHaveLength(1);
    expect(twoLateRounds(80 + T + 1, 300).found).toEqual([]);
  });
});

describe("blocked-by-nobody after a release carrying the token's tombstone", () => {
  it("records the release's end as the tombstone's life, on the node's clock", () => {
    const { cluster } = twoLateRounds(1_000, 1_100, {});
    const ends = cluster.tokenEnds.filter((e) => e.token === A);
    expect(ends.map((e) => e.node)).toEqual([0, 1, 2]);
    for (const end of ends) expect(end.until - end.at).toBe(T + 1);
  });

  it("the late requests within T place nothing (the tombstone refuses them)", () => {
    const { cluster, found } = twoLateRounds(250, 300, {});
    const late = cluster.keyStates.filter((s) => s.at >= EPOCH + 250 && s.value !== null);
    expect(late).toEqual([]);
    expect(found).toEqual([]);
  });

  it("finds the placements within the tombstone's life when RELEASE writes none (mutant)", () => {
    const overrides = MUTANTS["r43-release-without-tombstone"];
    const { found } = twoLateRounds(250, 300, { overrides });
    expect(found).toHaveLength(1);
    expect(found[0]?.detail).toContain("(nodes 0, 2), for 205 ms from");
    // After the (asked-for) tombstone's life: L3's stated limit, not a finding.
    expect(twoLateRounds(80 + T + 1, 300, { overrides }).found).toEqual([]);
  });
});
