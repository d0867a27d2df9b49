/**
 * A `lease` too short to reach `minValidity`, given to a wrapper with a fixed manager, is refused
 * when the wrapper is built (their options say "validated when built"), not with a 500 or a throw
 * on every request. With a function for `locks` the manager comes per request: it builds, and
 * the call's own check names `lease`. Every surface that takes `lease`. Pure option checks: no
 * node is asked (memory nodes).
 */
import { describe, expect, it } from "vitest";
import { idempotency, limit, lock } from "../../src/adapters/hono/index";
import {
  dedupeScheduled as lambdaScheduled,
  withIdempotency,
  withLimit,
  withLock,
} from "../../src/adapters/lambda/index";
import { dedupeScheduled as workersScheduled } from "../../src/adapters/workers/index";
import { ConfigurationError, createLocks, type Locks } from "../../src/index";
import { memoryNodes } from "../../src/testing/index";

const fixed = createLocks({ nodes: memoryNodes(1), minValidity: 50 });
const job = async () => undefined;

const SURFACES: [string, (locks: Locks | (() => Locks), lease: number) => unknown][] = [
  ["lock()", (locks, lease) => lock({ locks, key: () => "k", lease })],
  ["limit()", (locks, lease) => limit({ locks, key: "k", permits: 2, lease })],
  ["idempotency()", (locks, lease) => idempotency({ locks, lease })],
  ["withLock", (locks, lease) => withLock(job, { locks, key: () => "k", lease })],
  ["withLimit", (locks, lease) => withLimit(job, { locks, key: "k", permits: 2, lease })],
  ["withIdempotency", (locks, lease) => withIdempotency(job, { locks, lease })],
  ["lambda dedupeScheduled", (locks, lease) => lambdaScheduled(job, { locks, lease })],
  [
    "workers dedupeScheduled",
    (locks, lease) => workersScheduled(job, { locks, name: "job", lease } as never),
  ],
];

describe("a lease too short for minValidity, with a fixed manager", () => {
  it.each(SURFACES)("%s refuses it when built, naming `lease`", (_, build) => {
    let error: unknown;
    try {
      build(fixed, 40);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toBe(
      "invalid option `lease`: too short: no grant could reach minValidity",
    );
  });

  it.each(SURFACES)(
    "%s builds with a lease that reaches it, or a manager per request",
    (_, build) => {
      expect(() => build(fixed, 1_000)).not.toThrow();
      expect(() => build(() => fixed, 40)).not.toThrow();
    },
  );
});
