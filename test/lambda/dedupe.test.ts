/**
 * `dedupeScheduled()` for AWS Lambda against a real dev cluster: EventBridge rule events delivered
 * several times (concurrently and sequentially) run once, a failed first run is retried and then
 * runs once, and Scheduler inputs with different execution ids but one scheduled time run once.
 */
import { afterEach, describe, expect, it } from "vitest";
import { dedupeScheduled, type ScheduledRuleEvent } from "../../src/adapters/lambda/index";
import { isConfigurationError, isQuorumError } from "../../src/errors";
import { createLocks, type LockEvent } from "../../src/index";
import { pttlBack, readBack, resetCluster, sleep, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";
import { fakeContext } from "./helpers";

const N = 3;
const dev = useDevCluster({ nodes: N });
const RULE = "arn:aws:events:us-east-1:123456789012:rule/daily-report";
const SCHEDULE = "arn:aws:scheduler:us-east-1:123456789012:schedule/default/nightly";
/** The invoked function of `fakeContext` (the job in the default key). */
const FN = "arn:aws:lambda:us-east-1:123456789012:function:edgelock-test";

afterEach(() => resetCluster(dev.cluster));

/** A distinct occurrence time per call (ISO 8601, whole seconds, as EventBridge sends it). */
let minute = 0;
const nextTime = () =>
  new Date(Date.UTC(2026, 0, 1, 3) + (minute++ + Math.floor(Math.random() * 1e6)) * 60_000)
    .toISOString()
    .replace(".000Z", "Z");

/** One delivery of a scheduled rule's occurrence: every delivery has its own event id. */
const ruleEvent = (time: string): ScheduledRuleEvent & Record<string, unknown> => ({
  version: "0",
  id: crypto.randomUUID(),
  "detail-type": "Scheduled Event",
  source: "aws.events",
  account: "123456789012",
  time,
  region: "us-east-1",
  resources: [RULE],
  detail: {},
});

/** One attempt of a Scheduler schedule, with the context attributes its target Input carries. */
const schedulerInput = (scheduledTime: string, attemptNumber: number) => ({
  scheduleArn: SCHEDULE,
  scheduledTime,
  executionId: crypto.randomUUID(),
  attemptNumber: String(attemptNumber),
});

/** A manager on the cluster with a fresh prefix, and a counting job wrapped in dedupeScheduled. */
function setup(
  work: (event: unknown) => Promise<string> = async () => {
    await sleep(150);
    return "rebuilt";
  },
) {
  const prefix = uniquePrefix("lambda-dedupe");
  const events: LockEvent[] = [];
  const locks = createLocks({
    nodes: dev.cluster.nodes,
    prefix,
    // Simultaneous deliveries on a loaded machine can take longer than the default 250 ms to be
    // answered (a QuorumError, not what these tests are about).
    requestTimeout: 1_500,
    onEvent: (event) => events.push(event),
  });
  const runs: unknown[] = [];
  const handler = dedupeScheduled(
    async (event: unknown) => {
      runs.push(event);
      return work(event);
    },
    { locks, lease: 5_000 },
  );
  return { prefix, locks, events, runs, handler };
}

describe("dedupeScheduled: EventBridge rule", () => {
  it("one occurrence delivered 3 times concurrently runs once; the others are skipped", async () => {
    const { runs, handler } = setup();
    const time = nextTime();
    const results = await Promise.all(
      [0, 1, 2].map(() => handler(ruleEvent(time), fakeContext(10_000))),
    );
    expect(runs).toHaveLength(1);
    expect(results.filter((r) => r === "rebuilt")).toHaveLength(1);
    const skipped = results.filter((r) => r !== "rebuilt");
    expect(skipped).toHaveLength(2);
    for (const r of skipped) {
      expect(r).toMatchObject({ skipped: true, reason: expect.stringMatching(/^(running|done)$/) });
    }
  });

  it("delivered 3 times in sequence: runs once, then skipped as done; the marker is in place", async () => {
    const { prefix, runs, handler } = setup();
    const time = nextTime();
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await handler(ruleEvent(time), fakeContext(10_000)));
    expect(runs).toHaveLength(1);
    expect(results[0]).toBe("rebuilt");
    expect(results.slice(1)).toEqual([
      { skipped: true, reason: "done", retryAfter: expect.any(Number) },
      { skipped: true, reason: "done", retryAfter: expect.any(Number) },
    ]);
    // Awaited before the invocation returned: the marker is on every node, kept 24 h.
    const full = `${prefix}scheduled:${FN}:${RULE}:${time}`;
    expect((await readBack(dev, N, full)).every((v) => v?.startsWith("done:"))).toBe(true);
    for (const pttl of await pttlBack(dev, N, full)) {
      expect(pttl).toBeGreaterThan(23 * 3_600_000);
      expect(pttl).toBeLessThanOrEqual(24 * 3_600_000);
    }
  });

  it("a first run that throws leaves nothing behind; Lambda's retry runs it once", async () => {
    let attempt = 0;
    const boom = new Error("report store unavailable");
    const { prefix, runs, handler } = setup(async () => {
      attempt += 1;
      if (attempt === 1) throw boom;
      return "rebuilt";
    });
    const time = nextTime();
    const event = ruleEvent(time);
    await expect(handler(event, fakeContext(10_000))).rejects.toBe(boom);
    // Released before the invocation returned: no lock, no marker.
    expect(await readBack(dev, N, `${prefix}scheduled:${FN}:${RULE}:${time}`)).toEqual([
      null,
      null,
      null,
    ]);
    // The async retry resends the same event; a late duplicate delivery follows.
    expect(await handler(event, fakeContext(10_000))).toBe("rebuilt");
    expect(await handler(ruleEvent(time), fakeContext(10_000))).toMatchObject({ reason: "done" });
    expect(runs).toHaveLength(2);
  });

  it("a failed run's release has reached every node, a slow one too, when the invocation returns", async () => {
    const boom = new Error("report store unavailable");
    const { prefix, handler } = setup(async () => {
      // The lock is held on every node; node 2 now answers 150 ms late (within the timeout).
      dev.cluster.controls[2]?.inject({ kind: "latency", ms: 150 });
      throw boom;
    });
    const time = nextTime();
    await expect(handler(ruleEvent(time), fakeContext(10_000))).rejects.toBe(boom);
    // A frozen environment sends nothing more: the slow node's release must have run already.
    expect(await readBack(dev, N, `${prefix}scheduled:${FN}:${RULE}:${time}`)).toEqual([
      null,
      null,
      null,
    ]);
  });

  it("two targets of one rule on shared nodes each run once per occurrence; duplicates skip", async () => {
    const { runs, handler } = setup(async () => "rebuilt");
    // Two functions (or two aliases of one) targeted by the same rule: one event per target.
    const target = (arn: string) => ({ ...fakeContext(10_000), invokedFunctionArn: arn });
    const report = "arn:aws:lambda:us-east-1:123456789012:function:report";
    const audit = "arn:aws:lambda:us-east-1:123456789012:function:report:audit";
    const time = nextTime();
    const first = await Promise.all([
      handler(ruleEvent(time), target(report)),
      handler(ruleEvent(time), target(audit)),
    ]);
    expect(first).toEqual(["rebuilt", "rebuilt"]);
    // A duplicate delivery to each target is still skipped.
    expect(await handler(ruleEvent(time), target(report))).toMatchObject({ reason: "done" });
    expect(await handler(ruleEvent(time), target(audit))).toMatchObject({ reason: "done" });
    expect(runs).toHaveLength(2);
  });

  it("lock.ticket() inside the job rejects with ConfigurationError `ticket`; a duplicate is skipped", async () => {
    let refusal: unknown;
    const prefix = uniquePrefix("lambda-dedupe-ticket");
    const handler = dedupeScheduled(
      async (_event: unknown, _context, lock) => {
        refusal = await lock.ticket().catch((e: unknown) => e);
        return "rebuilt";
      },
      { locks: createLocks({ nodes: dev.cluster.nodes, prefix }) },
    );
    const time = nextTime();
    expect(await handler(ruleEvent(time), fakeContext(10_000))).toBe("rebuilt");
    expect(isConfigurationError(refusal) && refusal.option).toBe("ticket");
    expect(await handler(ruleEvent(time), fakeContext(10_000))).toMatchObject({ reason: "done" });
  });

  it("different occurrences of the rule each run", async () => {
    const { runs, handler } = setup(async () => "rebuilt");
    const results = await Promise.all(
      [nextTime(), nextTime(), nextTime()].map((t) => handler(ruleEvent(t), fakeContext(10_000))),
    );
    expect(results).toEqual(["rebuilt", "rebuilt", "rebuilt"]);
    expect(runs).toHaveLength(3);
  });

  it("the lock's TTL is bounded by the remaining time", async () => {
    const prefix = uniquePrefix("lambda-dedupe-ttl");
    const time = nextTime();
    const full = `${prefix}scheduled:${FN}:${RULE}:${time}`;
    let pttls: number[] = [];
    const handler = dedupeScheduled(
      async () => {
        pttls = await pttlBack(dev, N, full);
        return "ok";
      },
      { locks: createLocks({ nodes: dev.cluster.nodes, prefix }), lease: 60_000, margin: 500 },
    );
    expect(await handler(ruleEvent(time), fakeContext(2_000))).toBe("ok");
    expect(pttls).toHaveLength(N);
    for (const pttl of pttls) {
      // min(lease 60 s, remaining 2 s + margin 0.5 s)
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(2_500);
    }
  });

  it("no quorum: rethrows QuorumError, the job does not run", async () => {
    const { runs, handler } = setup();
    for (const control of dev.cluster.controls.slice(0, 2)) {
      control.inject({ kind: "status", status: 500, command: "evalsha" });
      control.inject({ kind: "status", status: 500, command: "eval" });
    }
    const error = await handler(ruleEvent(nextTime()), fakeContext(10_000)).catch((e) => e);
    expect(isQuorumError(error)).toBe(true);
    expect(runs).toHaveLength(0);
  });
});

describe("dedupeScheduled: EventBridge Scheduler", () => {
  it("attempts with different execution ids but one scheduled time run once", async () => {
    const { runs, handler } = setup();
    const time = nextTime();
    const concurrent = await Promise.all(
      [1, 2].map((n) => handler(schedulerInput(time, n), fakeContext(10_000))),
    );
    const later = await handler(schedulerInput(time, 3), fakeContext(10_000));
    expect(runs).toHaveLength(1);
    expect(concurrent.filter((r) => r === "rebuilt")).toHaveLength(1);
    expect(later).toMatchObject({ skipped: true, reason: "done" });
  });

  it("kebab-case context attribute names key the same occurrence", async () => {
    const { runs, handler } = setup(async () => "rebuilt");
    const time = nextTime();
    expect(await handler(schedulerInput(time, 1), fakeContext(10_000))).toBe("rebuilt");
    const kebab = { "schedule-arn": SCHEDULE, "scheduled-time": time, "execution-id": "x" };
    expect(await handler(kebab, fakeContext(10_000))).toMatchObject({ reason: "done" });
    expect(runs).toHaveLength(1);
  });

  it("a `key` option overrides the derived key", async () => {
    const prefix = uniquePrefix("lambda-dedupe-key");
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix });
    let runs = 0;
    const handler = dedupeScheduled(
      async (_event: { day: string }) => {
        runs += 1;
        return "ran";
      },
      { locks, key: (event) => `daily:${event.day}` },
    );
    expect(await handler({ day: "2026-01-01" }, fakeContext(10_000))).toBe("ran");
    expect(await handler({ day: "2026-01-01" }, fakeContext(10_000))).toMatchObject({
      reason: "done",
    });
    expect(await handler({ day: "2026-01-02" }, fakeContext(10_000))).toBe("ran");
    expect(runs).toBe(2);
    expect(await readBack(dev, 1, `${prefix}daily:2026-01-01`)).toEqual([
      expect.stringMatching(/^done:/),
    ]);
  });
});
