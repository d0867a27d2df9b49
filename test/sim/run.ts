/**
 * Run one simulated schedule: build the nodes (each on its own clock), the network and one client
 * realm per `Locks` instance from the spec, start the callers, run virtual time until everything
 * settled, wait out every TTL, then check the observations (`check/properties.ts`). Deterministic:
 * the same spec (and overrides) always gives the same trace and verdict.
 *
 * @module
 */

import type { Locks } from "../../src/index";
import type { Freeze } from "./check/permit-waits";
import { checkSchedule, type Finding, type Verdict } from "./check/properties";
import type { ScriptOverrides } from "./mutants";
import { prepareBundle, type SourcePatch } from "./runtime/bundle";
import { WEATHERS } from "./runtime/fates";
import { SimNetwork } from "./runtime/network";
import type { NodeClockSpec } from "./runtime/node-clock";
import { Random } from "./runtime/random";
import { createClient, releaseClients, type SimClient } from "./runtime/realm";
import { EPOCH, Scheduler } from "./runtime/scheduler";
import { type Observations, type Peer, runCaller } from "./workload/actor";
import { CLOCK_RATE_SPREAD, DRIFT_FACTOR } from "./workload/clocks";
import type { ScheduleSpec } from "./workload/spec";
import { SimStore } from "./workload/store";

/** What one schedule came to. */
export interface RunResult {
  readonly verdict: Verdict;
  /** Simulated events (timer firings, request arrivals and replies). */
  readonly events: number;
  /** Virtual ms from the first caller's start to quiescence. */
  readonly virtualMs: number;
  /** With `trace`: one line per grant, wipe and finding, in order (for replay checks). */
  readonly trace?: readonly string[];
}

/** Options of {@link runSchedule}. */
export interface RunOptions {
  readonly overrides?: ScriptOverrides | undefined;
  /** Changes to the library's source in every client realm (client-side mutants). */
  readonly patches?: readonly SourcePatch[] | undefined;
  readonly trace?: boolean | undefined;
  /** Every request, reply, publish and node fault as it happens (for debugging a schedule). */
  readonly log?: ((line: string) => void) | undefined;
}

const RETRY_DELAY = 20;
const RETRY_DELAY_MAX = 200;
/** Virtual time after the last caller ended, to let every TTL and room expire. */
const SETTLE_MS = 12_000;
const LIMITS = { virtualMs: 600_000, events: 400_000 };
/**
 * How far a node's wall clock may be from virtual epoch time at the start (ms): far more than the
 * clients' ±20 ms, since nothing may depend on it (`runtime/node-clock.ts`).
 */
const NODE_OFFSET_MS = 30_000;

/** Each node's clock: its rate from the spec (exact if none), its epoch offset from the seed. */
const nodeClocks = (spec: ScheduleSpec, random: Random): NodeClockSpec[] =>
  Array.from({ length: spec.nodes }, (_, n) => ({
    rate: spec.nodeRates?.[n] ?? 1,
    offsetMs: random.split(`node-clock:${n}`).int(-NODE_OFFSET_MS, NODE_OFFSET_MS),
  }));

/**
 * @example
 * const { verdict } = await runSchedule(spec);
 * expect(verdict.bugs).toEqual([]);
 */
export async function runSchedule(
  spec: ScheduleSpec,
  options: RunOptions = {},
): Promise<RunResult> {
  const patches = options.patches ?? [];
  if (patches.length > 0) await prepareBundle(patches);
  const scheduler = new Scheduler();
  const random = new Random(spec.seed);
  const weather = WEATHERS[spec.weather];
  const net = new SimNetwork(
    scheduler,
    random.split("net"),
    nodeClocks(spec, random),
    weather,
    options.overrides,
    options.log === undefined ? undefined : (line) => options.log?.(`${scheduler.now} ${line}`),
  );
  net.late = spec.late ?? [];
  net.cuts = spec.cuts ?? [];
  const clock = { now: () => scheduler.now, sleep: (ms: number) => scheduler.sleep(ms) };
  const store = new SimStore(clock, 1);
  const observed: Observations = {
    grants: [],
    owner: new Map(),
    waits: [],
    jobs: [],
    idempotentRuns: [],
    idempotentAnswers: [],
    problems: [],
    permits: [],
    permitWaits: [],
    soloGrants: new Set(),
    resumes: new Set(),
  };
  const clients: SimClient[] = [];
  const peers: Peer[] = [];
  net.hosts.forEach((host, n) => {
    const counter = spec.counters?.[n];
    if (counter === undefined || counter === 0) return;
    for (let k = 0; k < spec.keys; k++) host.node.set(`sim:k${k}:fence`, String(counter));
  });
  let running = 0;
  /** Callers still running, per instance (a stopped instance's never end). */
  const runningOf = spec.instances.map(() => 0);
  const owners = spec.instances.map(() => ({ dead: false }));
  try {
    spec.instances.forEach((instance, i) => {
      const client = createClient(scheduler, {
        rate: instance.rate,
        offsetMs: instance.offsetMs ?? random.split(`offset:${i}`).int(-20, 20),
        random: random.split(`client:${i}`),
        patches,
      });
      clients.push(client);
      const locks: Locks = client.lib.createLocks({
        nodes: Array.from({ length: spec.nodes }, (_, n) => net.link(i, n, owners[i])),
        prefix: "sim:",
        fencing: spec.fencing,
        driftFactor: DRIFT_FACTOR,
        wake: instance.wake,
        retryDelay: RETRY_DELAY,
        retryDelayMax: RETRY_DELAY_MAX,
      });
      // Tickets go to the lock workload's instances only (`to` counts among them).
      if (instance.permits === undefined) {
        peers.push({ lib: client.lib, locks, instance: i, toGlobal: client.toGlobal });
      }
      const active = new Map<string, number>();
      instance.callers.forEach((caller, c) => {
        running++;
        runningOf[i] = (runningOf[i] ?? 0) + 1;
        scheduler.after(caller.start, () => {
          const ctx = {
            peers,
            clock,
            store,
            lib: client.lib,
            locks,
            instance: i,
            caller: c,
            toGlobal: client.toGlobal,
            epoch: client.epoch,
            observed,
            keyName: (key: number) => `k${key}`,
            active,
            wake: instance.wake,
            rate: instance.rate,
            permits: instance.permits,
          };
          void runCaller(ctx, caller.ops).finally(() => {
            running--;
            runningOf[i] = (runningOf[i] ?? 1) - 1;
          });
        });
      });
    });
    scheduleNodeEvents(spec, scheduler, net, random.split("nodes"));
    for (const stop of spec.stops ?? []) {
      scheduler.after(stop.at, () => {
        const owner = owners[stop.instance];
        if (owner === undefined || owner.dead) return;
        owner.dead = true;
        clients[stop.instance]?.kill();
        if (stop.streams === "closed") net.closeStreamsOf(owner);
        // Its callers never end: the run does not wait for them.
        running -= runningOf[stop.instance] ?? 0;
        runningOf[stop.instance] = 0;
      });
    }
    const start = scheduler.now;
    const settled = await scheduler.run({
      until: start + LIMITS.virtualMs,
      maxEvents: LIMITS.events,
    });
    const virtualMs = scheduler.now - start;
    const stuck: Finding[] = [];
    if (!settled || running > 0) {
      const detail = `${running} callers still running after ${virtualMs} virtual ms, ${scheduler.events} events`;
      stuck.push({ property: "termination", detail });
    }
    // Wait out every lease, reservation and room, then look at what the nodes still hold.
    scheduler.now += SETTLE_MS;
    const remaining = net.hosts.flatMap((host, node) =>
      host.node
        .keys()
        .map((key) => ({ node, key, value: host.node.get(key), pttl: host.node.pttl(key) })),
    );
    const verdict = checkSchedule({
      observed,
      resource: store.state(),
      wipes: net.wipes,
      remaining,
      faultFree: spec.weather === "calm" && spec.restarts === "none",
      freezes: freezesOf(spec, start),
      livenessSlack: 2 * RETRY_DELAY_MAX + 1_500,
      // Half a refresh: a release that serves nobody leaves the key free up to a whole one.
      queueIdle: RETRY_DELAY_MAX / 2,
      // Offsets of ±20 ms each; rates within CLOCK_RATE_SPREAD each of virtual time.
      skew: (at) => 40 + 2 * CLOCK_RATE_SPREAD * (at - EPOCH),
      nodeRates: Array.from({ length: spec.nodes }, (_, n) => spec.nodeRates?.[n] ?? 1),
      nodeHistory: {
        states: net.keyStates,
        ends: net.tokenEnds,
        nodes: spec.nodes,
        quorum: Math.floor(spec.nodes / 2) + 1,
        prefix: "sim:",
        visits: net.roomVisits,
      },
    });
    const result = { ...verdict, bugs: [...stuck, ...verdict.bugs] };
    const trace = options.trace ? traceOf(observed, net, result) : undefined;
    return { verdict: result, events: scheduler.events, virtualMs, ...(trace ? { trace } : {}) };
  } finally {
    for (const client of clients) client.kill();
    releaseClients();
  }
}

/**
 * The processes that froze, in global time, for the permit waiters' properties; `undefined` with
 * a link cut or a delayed window (a named regression's faults, which `faultFree` does not see):
 * permit waiters are then not judged.
 */
function freezesOf(spec: ScheduleSpec, start: number): Freeze[] | undefined {
  if ((spec.cuts ?? []).length > 0 || (spec.late ?? []).length > 0) return undefined;
  return (spec.stops ?? []).map((stop) => ({ instance: stop.instance, at: start + stop.at }));
}

/** Pauses and restarts of a minority of nodes, at seeded times within the first seconds. */
function scheduleNodeEvents(
  spec: ScheduleSpec,
  scheduler: Scheduler,
  net: SimNetwork,
  random: Random,
): void {
  if (spec.restarts === "none") return;
  const minority = Math.floor((spec.nodes - 1) / 2);
  const count = random.int(1, 3);
  for (let e = 0; e < count; e++) {
    // A single node may be restarted too (then its callers see the hazard or unavailability).
    const index = minority === 0 ? 0 : random.int(0, spec.nodes - 1);
    const at = random.int(0, 3_000);
    const long = random.int(50, 2_400);
    if (spec.restarts === "pauses") {
      scheduler.after(at, () => net.pause(index));
      scheduler.after(at + long, () => net.resume(index));
    } else {
      // Down at once or for longer than a lease; restarted with its data, or empty.
      const down = random.chance(0.5) ? 0 : long;
      scheduler.after(at, () => net.restart(index, spec.restarts === "keep", down));
    }
  }
}

function traceOf(observed: Observations, net: SimNetwork, verdict: Verdict): string[] {
  return [
    ...observed.grants.map(
      (g) =>
        `${g.granted} grant ${g.id} ${g.key} fence=${g.fence} valid=${Math.round(g.validEnd)} extended=${g.extended}/${g.extendFailed} release=${g.releaseStatus}`,
    ),
    ...net.wipes.map((w) => `${w.at} wipe node ${w.node}`),
    ...observed.jobs.map((j) => `${j.at} job ${j.job}`),
    ...observed.idempotentRuns.map(
      (r) =>
        `${r.at} idempotent run ${r.key} body=${r.body} "${r.answer}" stored=${r.stored} end=${r.endedAt}`,
    ),
    ...observed.idempotentAnswers.map(
      (a) =>
        `${a.at} idempotent answer ${a.key} body=${a.body} ${a.kind}${a.replayed === undefined ? "" : ` "${a.replayed}"`}`,
    ),
    ...observed.permits.map(
      (p) =>
        `${p.granted} permit ${p.id} ${p.semaphore} slot=${p.slot}/${p.permits} token=${p.token.slice(0, 8)} valid=${Math.round(p.validEnd)} release=${p.releaseStart ?? "none"}`,
    ),
    ...verdict.bugs.map((b) => `bug ${b.property}: ${b.detail}`),
  ];
}
