import { describe, expect, it } from "vitest";
import { type LambdaContext, withLock } from "../../src/adapters/lambda/index";
import { createLocks, isLockBusyError, type Locks } from "../../src/index";
import { memoryNodes } from "../../src/testing/index";

// The handler under test. In your project it lives in its own module and takes its `Locks`.
function createHandler(locks: Locks) {
  return withLock(
    async (event: { invoiceId: string }, _context, lock) => ({
      charged: event.invoiceId,
      validFor: lock.validUntil - Date.now(),
    }),
    { locks, key: (event) => `invoice:${event.invoiceId}`, lease: 30_000 },
  );
}

// The one part of Lambda's context that withLock reads: the time left.
const context = (remainingMs: number) =>
  ({ getRemainingTimeInMillis: () => remainingMs }) as LambdaContext;

describe("chargeInvoice", () => {
  it("runs under the invoice's lock and releases it on every node before returning", async () => {
    const nodes = memoryNodes(3);
    const handler = createHandler(createLocks({ nodes }));
    const result = await handler({ invoiceId: "42" }, context(60_000));
    expect(result.charged).toBe("42");
    expect(nodes.map((node) => node.pttl("lock:invoice:42"))).toEqual([-2, -2, -2]);
  });

  it("the lock lasts no longer than the invocation's remaining time plus the margin", async () => {
    const handler = createHandler(createLocks({ nodes: memoryNodes(3) }));
    const { validFor } = await handler({ invoiceId: "42" }, context(5_000));
    expect(validFor).toBeLessThanOrEqual(6_000); // 5 s left + 1 s margin, not the 30 s lease
  });

  it("throws LockBusyError while another invocation holds the invoice", async () => {
    const nodes = memoryNodes(3);
    const locks = createLocks({ nodes });
    const handler = createHandler(locks);
    const held = await locks.acquire("invoice:42");
    const error = await handler({ invoiceId: "42" }, context(60_000)).catch((e: unknown) => e);
    expect(isLockBusyError(error)).toBe(true);
    await held.release();
  });
});
