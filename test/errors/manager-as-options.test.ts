/**
 * The manager passed where an entry point's options go (`limit(locks, { ... })`, a common slip
 * when a signature is guessed): every surface that takes a `locks` option says so, naming
 * `options`, instead of "unknown option `acquire`" (the first method of the manager it met).
 * Pure option checks: no node is asked (memory nodes).
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
import { ConfigurationError, createLocks } from "../../src/index";
import { memoryNodes } from "../../src/testing/index";

const locks = createLocks({ nodes: memoryNodes(1) });
const manager = locks as never;
const job = async () => undefined;

const SURFACES: [string, () => unknown][] = [
  ["lock()", () => lock(manager)],
  ["limit()", () => limit(manager)],
  ["idempotency", () => idempotency(manager)],
  ["withLock", () => withLock(job, manager)],
  ["withLimit", () => withLimit(job, manager)],
  ["withIdempotency", () => withIdempotency(job, manager)],
  ["dedupeScheduled", () => lambdaScheduled(job, manager)],
  ["dedupeScheduled", () => workersScheduled(job, manager)],
];

describe("the lock manager where the options go", () => {
  it.each(SURFACES)("%s names `options` and says to pass it as `locks`", (of, build) => {
    let error: unknown;
    try {
      build();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toMatchObject({ option: "options" });
    expect((error as Error).message).toContain(`${of} got the lock manager: pass it as \`locks\``);
  });

  it("an options object with an unknown name still names that option", () => {
    expect(() => limit({ locks, key: "k", permits: 2, acquire: 1 } as never)).toThrow(
      expect.objectContaining({ option: "acquire" }),
    );
  });
});
