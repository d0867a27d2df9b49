/**
 * `functions/lambda.rebuildReport`: the example's scheduled entry point (EventBridge rule or
 * Scheduler) against a real dev cluster, with the rebuild shortened through `REPORT_MS`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocks } from "../../src/index";
import { eventually, readBack, resetCluster, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";
import { fakeContext } from "./helpers";

type LambdaModule = typeof import("../../functions/lambda");

const N = 3;
const dev = useDevCluster({ nodes: N });
const prefix = uniquePrefix("functions-scheduled");
const ENV_KEYS = ["EDGELOCK_NODES", "LOCK_PREFIX", "REPORT_MS"] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
const RULE = "arn:aws:events:us-east-1:123456789012:rule/daily-report";
let fn: LambdaModule;

beforeAll(async () => {
  process.env.EDGELOCK_NODES = JSON.stringify(dev.cluster.nodes);
  process.env.LOCK_PREFIX = prefix;
  process.env.REPORT_MS = "300";
  fn = await import("../../functions/lambda");
});

afterAll(() => {
  resetCluster(dev.cluster);
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});

let day = 0;
const ruleEvent = (time: string) => ({
  version: "0",
  id: crypto.randomUUID(),
  "detail-type": "Scheduled Event" as const,
  source: "aws.events" as const,
  account: "123456789012",
  time,
  region: "us-east-1",
  resources: [RULE],
  detail: {},
});
const nextTime = () =>
  new Date(Date.UTC(2026, 0, 1 + day++, 3)).toISOString().replace(".000Z", "Z");

describe("functions/lambda.rebuildReport", () => {
  it("a rule occurrence delivered 3 times concurrently rebuilds once", async () => {
    const time = nextTime();
    const results = await Promise.all(
      [0, 1, 2].map(() => fn.rebuildReport(ruleEvent(time), fakeContext(10_000))),
    );
    expect(results.filter((r) => "status" in r && r.status === "rebuilt")).toEqual([
      { status: "rebuilt", steps: 10 },
    ]);
    expect(results.filter((r) => "skipped" in r)).toHaveLength(2);
    // Both locks are gone (the report lock released, the run's lock now the done marker).
    // A release resolves at a majority; the last node's delete may land a moment later.
    const report = () => readBack(dev, N, `${prefix}reports:daily`);
    await eventually(async () => (await report()).every((v) => v === null), 3_000);
    const marker = await readBack(
      dev,
      N,
      `${prefix}scheduled:${fakeContext(0).invokedFunctionArn}:${RULE}:${time}`,
    );
    expect(marker.every((v) => v?.startsWith("done:"))).toBe(true);
  });

  it("a Scheduler input keys on schedule ARN + scheduled time", async () => {
    const time = nextTime();
    const input = (attempt: number) => ({
      scheduleArn: "arn:aws:scheduler:us-east-1:123456789012:schedule/default/daily-report",
      scheduledTime: time,
      executionId: crypto.randomUUID(),
      attemptNumber: String(attempt),
    });
    expect(await fn.rebuildReport(input(1), fakeContext(10_000))).toEqual({
      status: "rebuilt",
      steps: 10,
    });
    expect(await fn.rebuildReport(input(2), fakeContext(10_000))).toMatchObject({
      skipped: true,
      reason: "done",
    });
  });

  it("an on-demand rebuild in progress stands in for the scheduled one", async () => {
    const onDemand = await createLocks({ nodes: dev.cluster.nodes, prefix }).acquire(
      "reports:daily",
      { lease: 10_000 },
    );
    try {
      const time = nextTime();
      expect(await fn.rebuildReport(ruleEvent(time), fakeContext(10_000))).toEqual({
        status: "already_running",
      });
      expect(await fn.rebuildReport(ruleEvent(time), fakeContext(10_000))).toMatchObject({
        skipped: true,
        reason: "done",
      });
    } finally {
      await onDemand.release();
    }
  });
});
