/**
 * A skipped scheduled invocation is visible by default: `dedupeScheduled` (Lambda) logs one
 * `console.info` line per skip naming the dedupe key and why, never a token; with `onSkip` the app
 * decides and nothing is logged. Against a real dev cluster.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { dedupeScheduled } from "../../src/adapters/lambda/index";
import { createLocks } from "../../src/index";
import { resetCluster, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";
import { fakeContext } from "./helpers";

const dev = useDevCluster({ nodes: 3 });
const RULE = "arn:aws:events:us-east-1:123456789012:rule/nightly";
const FN = "arn:aws:lambda:us-east-1:123456789012:function:edgelock-test";

afterEach(() => {
  resetCluster(dev.cluster);
  vi.restoreAllMocks();
});

const ruleEvent = (time: string) => ({
  id: crypto.randomUUID(),
  "detail-type": "Scheduled Event",
  source: "aws.events",
  time,
  resources: [RULE],
  detail: {},
});
const uniqueTime = () =>
  new Date(Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 1e6) * 60_000)
    .toISOString()
    .replace(".000Z", "Z");

describe("dedupeScheduled (Lambda): skips are visible", () => {
  it("logs one console.info line per skip with the key and reason, and no token", async () => {
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix: uniquePrefix("skip-log") });
    const tokens: string[] = [];
    const handler = dedupeScheduled(
      async (_event, _context, lock) => {
        tokens.push(lock.token);
        return "ran";
      },
      { locks },
    );
    const info = vi.spyOn(console, "info").mockImplementation(() => {});
    const time = uniqueTime();
    expect(await handler(ruleEvent(time), fakeContext(10_000))).toBe("ran");
    expect(info).not.toHaveBeenCalled();
    await handler(ruleEvent(time), fakeContext(10_000));
    await handler(ruleEvent(time), fakeContext(10_000));
    expect(info).toHaveBeenCalledTimes(2);
    const key = `scheduled:${FN}:${RULE}:${time}`;
    for (const [line] of info.mock.calls) {
      expect(line).toMatch(
        /^edgelock: skipped scheduled job ".+": it already ran \(its done marker stays \d+ s more\)$/,
      );
      expect(line).toContain(JSON.stringify(key));
      expect(line).not.toContain(tokens[0] as string);
      for (const node of dev.cluster.nodes) expect(line).not.toContain(node.token);
    }
  });

  it("with onSkip the app decides: onSkip gets the key and reason, nothing is logged", async () => {
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix: uniquePrefix("skip-hook") });
    const skips: unknown[] = [];
    const handler = dedupeScheduled(async () => "ran", {
      locks,
      onSkip: (skip, event) => void skips.push({ ...skip, id: (event as { id: string }).id }),
    });
    const info = vi.spyOn(console, "info").mockImplementation(() => {});
    const time = uniqueTime();
    await handler(ruleEvent(time), fakeContext(10_000));
    const duplicate = ruleEvent(time);
    expect(await handler(duplicate, fakeContext(10_000))).toMatchObject({ reason: "done" });
    expect(skips).toEqual([
      {
        key: `scheduled:${FN}:${RULE}:${time}`,
        reason: "done",
        retryAfter: expect.any(Number),
        id: duplicate.id,
      },
    ]);
    expect(info).not.toHaveBeenCalled();
  });

  it("onSkip that is not a function is a ConfigurationError naming it", () => {
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix: uniquePrefix("skip-bad") });
    expect(() =>
      dedupeScheduled(async () => "ran", { locks, onSkip: "log" as never }),
    ).toThrowError(expect.objectContaining({ name: "ConfigurationError", option: "onSkip" }));
  });
});
