/**
 * The example Hono app behind both deployables: `functions/worker.ts` (Cloudflare Worker) and
 * `functions/lambda.ts` (AWS Lambda through hono's adapter). Only the way the lock manager is
 * built differs per platform, so it comes in as `getLocks`.
 *
 * - `POST /invoices/:id/charge`: one lock per invoice, so two concurrent clicks never charge twice;
 *   with an `Idempotency-Key`, a client's retry after a timeout gets the first answer replayed.
 * - `POST /reports/daily/rebuild`: one global lock; the rebuild outlives the lease and relies on
 *   auto-extension, and stops when `c.var.lock.signal` aborts.
 * - `POST /exports/:id`: at most three exports render at once, across every isolate (`limit()`, a
 *   semaphore on the lock nodes); a fourth waits up to 10 s for a permit, then gets 429.
 * - `GET /locks/:key`: per-node view of a lock, for operators (put it behind your auth).
 *
 * @module
 */
import { type Context, Hono } from "hono";
import { isConfigurationError, isLockLostError, type Locks } from "../src";
import { idempotency, limit, lock } from "../src/adapters/hono";

/** Timings of the example; the defaults suit a deployed Worker, tests shorten them. */
export interface AppOptions {
  /** Simulated latency of the payment provider, ms. @default 150 */
  readonly paymentMs?: number;
  /** Lease of each invoice lock, ms. @default 5000 */
  readonly invoiceLease?: number;
  /** Lease of the global report lock, ms (shorter than the rebuild on purpose). @default 5000 */
  readonly reportLease?: number;
  /** Duration of one report rebuild, ms. @default 12000 */
  readonly reportMs?: number;
  /** Duration of one export, ms, or a function of the request (a Worker's `[vars]`). @default 300 */
  readonly exportMs?: number | ((c: Context) => number);
}

/** How many exports render at once, across every isolate (`POST /exports/:id`). */
export const EXPORT_PERMITS = 3;

interface Invoice {
  charges: number;
  paidAt: string | undefined;
}

/**
 * Simulated work (a payment call, a report step): resolve after `ms`; reject with the signal's
 * reason (e.g. `LockLostError`) if it aborts first.
 */
export function work(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Key of the global report lock, shared by the HTTP route and the Worker's cron. */
export const REPORT_KEY = "reports:daily";

/**
 * Rebuild the daily report in ten steps, checking `signal` between steps: if the lock is lost (or
 * the budget runs out) the rebuild stops with the signal's reason instead of racing a new holder.
 */
export async function rebuildDailyReport(durationMs: number, signal: AbortSignal): Promise<number> {
  const steps = 10;
  for (let step = 0; step < steps; step++) await work(durationMs / steps, signal);
  return steps;
}

const problem = (c: Context, status: 500 | 503, title: string, detail: string) =>
  c.body(JSON.stringify({ type: "about:blank", title, status, detail }), status, {
    "Content-Type": "application/problem+json",
  });

/**
 * Build the example app.
 *
 * @param getLocks - the lock manager for this request; build it once per env, not per request
 * @example
 * ```ts
 * const locks = createLocks({ nodes: nodesFromEnv(process.env) });
 * const app = createApp(() => locks);
 * ```
 */
export function createApp(getLocks: (c: Context) => Locks, options: AppOptions = {}): Hono {
  const { paymentMs = 150, invoiceLease = 5_000, reportLease = 5_000, reportMs = 12_000 } = options;
  const { exportMs = 300 } = options;
  // Stands in for your database. Per isolate / per Lambda instance: the lock is what keeps two
  // concurrent charges of one invoice apart, not this map.
  const invoices = new Map<string, Invoice>();
  const app = new Hono();

  app.post(
    "/invoices/:id/charge",
    // A client that retries after a timeout sends the same Idempotency-Key: it gets the first
    // answer replayed instead of a second charge (or 409 while the first still runs).
    idempotency({ locks: getLocks, lease: invoiceLease }),
    // Requests without a key (or with different keys) for one invoice still take turns.
    lock({ locks: getLocks, key: (c) => `invoice:${c.req.param("id")}`, lease: invoiceLease }),
    async (c) => {
      const held = c.var.lock;
      const id = c.req.param("id");
      const invoice = invoices.get(id) ?? { charges: 0, paidAt: undefined };
      invoices.set(id, invoice);
      const lease = {
        fence: held.fence ?? null,
        validUntil: new Date(held.validUntil).toISOString(),
      };
      if (invoice.paidAt !== undefined) {
        return c.json({ id, status: "already_paid", charges: invoice.charges, ...lease });
      }
      // Between this read and the write below the handler awaits the provider: without the lock,
      // a second request would see the invoice unpaid and charge it again.
      await work(paymentMs, held.signal);
      invoice.charges += 1;
      invoice.paidAt = new Date().toISOString();
      return c.json({ id, status: "charged", charges: invoice.charges, ...lease });
    },
  );

  app.post(
    "/reports/daily/rebuild",
    lock({ locks: getLocks, key: () => REPORT_KEY, lease: reportLease }),
    async (c) => {
      const held = c.var.lock;
      const started = performance.now();
      const steps = await rebuildDailyReport(reportMs, held.signal);
      return c.json({
        status: "rebuilt",
        steps,
        durationMs: Math.round(performance.now() - started),
        validUntil: new Date(held.validUntil).toISOString(),
      });
    },
  );

  // Exports this isolate renders now: what each answer reports, so a burst shows the limit.
  let rendering = 0;
  app.post(
    "/exports/:id",
    limit({ locks: getLocks, key: "exports", permits: EXPORT_PERMITS, wait: 10_000 }),
    async (c) => {
      rendering += 1;
      const running = rendering; // this one included
      try {
        await work(typeof exportMs === "number" ? exportMs : exportMs(c), c.var.permit.signal);
      } finally {
        rendering -= 1;
      }
      return c.json({ id: c.req.param("id"), status: "exported", running });
    },
  );

  app.get("/locks/:key{.+}", async (c) => {
    const result = await getLocks(c).inspect(c.req.param("key"));
    return c.json({
      key: result.key,
      held: result.held,
      retryAfter: result.retryAfter ?? null,
      fence: result.fence,
      nodes: result.nodes.map((o) => ({
        index: o.index,
        host: o.host,
        status: o.status,
        pttl: o.pttl ?? null,
      })),
    });
  });

  app.onError((error, c) => {
    if (isLockLostError(error)) {
      return problem(c, 503, "Lock lost", "The work stopped because its lock was lost.");
    }
    // Configuration messages name the option or variable and never contain a token.
    if (isConfigurationError(error)) return problem(c, 500, "Misconfigured", error.message);
    return problem(c, 500, "Internal Server Error", "The request failed.");
  });

  return app;
}
