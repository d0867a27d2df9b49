/**
 * The AWS Lambda entry points.
 *
 * - `handler` (`functions/lambda.handler`): the example app of `./app.ts`, the same one the Worker
 *   serves, behind API Gateway (HTTP or REST API), a Function URL or an ALB through hono's
 *   adapter. The `lock()` middleware reads each invocation's budget from
 *   `c.env.lambdaContext.getRemainingTimeInMillis()`.
 * - `chargeInvoice` (`functions/lambda.chargeInvoice`): a plain handler for asynchronous invokes
 *   (SQS, EventBridge, `aws lambda invoke --invocation-type Event`), wrapped in `withLock`. A busy
 *   invoice throws `LockBusyError`, so Lambda retries the event later.
 * - `rebuildReport` (`functions/lambda.rebuildReport`): the daily report for an EventBridge rule
 *   (`cron(0 3 * * ? *)`) or an EventBridge Scheduler schedule, at most once per scheduled time
 *   (`dedupeScheduled`), under the same report lock as `POST /reports/daily/rebuild`.
 *
 * Nodes come from the environment: `EDGELOCK_NODES` (JSON `[{"url","token"}, …]`), or
 * `UPSTASH_REDIS_REST_URL` + `UPSTASH_REDIS_REST_TOKEN` for a single database; `LOCK_PREFIX`
 * optionally sets the key namespace. The lock manager is built on first use and kept for the
 * container's lifetime (module scope), so a warm invocation reuses it.
 *
 * Set the function's timeout above the longest route (the report rebuild takes 12 s): every lock
 * lives at most `remaining time + 1 s`, and work stops when `lock.signal` aborts near the deadline.
 *
 * @module
 */
import { handle } from "hono/aws-lambda";
import { budget, createLocks, type Locks, nodesFromEnv } from "../src";
import { dedupeScheduled, withLock } from "../src/adapters/lambda";
import { createApp, REPORT_KEY, rebuildDailyReport, work } from "./app";

let locks: Locks | undefined;

/**
 * The container's lock manager, built from `process.env` on first use. Configuration errors
 * (missing or malformed variables) surface on the first invocation, naming the variable.
 *
 * @example
 * const report = await getLocks().inspect("invoice:42");
 */
export function getLocks(): Locks {
  if (locks === undefined) {
    const prefix = process.env.LOCK_PREFIX;
    locks = createLocks({
      nodes: nodesFromEnv(process.env),
      ...(prefix === undefined || prefix === "" ? {} : { prefix }),
    });
  }
  return locks;
}

/**
 * The example app (`./app.ts`) through API Gateway, a Function URL or an ALB
 * (handler setting `functions/lambda.handler`).
 *
 * @example
 * // Function URL / HTTP API event → { statusCode: 200, body: '{"id":"42","status":"charged",…}' }
 * await handler(functionUrlEvent("POST", "/invoices/42/charge"), context);
 */
export const handler = handle(createApp(() => getLocks()));

/**
 * Event of {@link chargeInvoice}.
 *
 * @example
 * { "invoiceId": "42" }
 */
export interface ChargeInvoiceEvent {
  readonly invoiceId: string;
}

/**
 * Result of {@link chargeInvoice}.
 *
 * @example
 * { "invoiceId": "42", "status": "charged", "charges": 1 }
 */
export interface ChargeInvoiceResult {
  readonly invoiceId: string;
  readonly status: "charged" | "already_paid";
  readonly charges: number;
}

/** Simulated latency of the payment provider, ms. */
const PAYMENT_MS = 150;
/** Lease of an invoice lock, ms: the longest a crashed charge can block the invoice. */
const INVOICE_LEASE_MS = 5_000;

// Stands in for your database, per container: the lock is what keeps two concurrent charges of one
// invoice apart, not this map.
const charges = new Map<string, number>();

/**
 * Charge an invoice, one invocation at a time per invoice; a paid invoice is not charged again.
 * It locks the same key as `POST /invoices/:id/charge`, so the two entry points exclude each other.
 * Lease 5000 ms; no `wait` (a busy invoice throws `LockBusyError` and Lambda retries the event).
 *
 * @example
 * // aws lambda invoke --function-name charge-invoice --invocation-type Event \
 * //   --cli-binary-format raw-in-base64-out --payload '{"invoiceId":"42"}' /dev/null
 * await chargeInvoice({ invoiceId: "42" }, context); // { invoiceId: "42", status: "charged", charges: 1 }
 */
export const chargeInvoice = withLock(
  async (event: ChargeInvoiceEvent, _context, lock): Promise<ChargeInvoiceResult> => {
    const { invoiceId } = event;
    const done = charges.get(invoiceId) ?? 0;
    if (done > 0) return { invoiceId, status: "already_paid", charges: done };
    // Between the read above and the write below we await the provider: without the lock, a
    // concurrent invocation would see the invoice unpaid and charge it again.
    await work(PAYMENT_MS, lock.signal); // the payment provider call
    charges.set(invoiceId, done + 1);
    return { invoiceId, status: "charged", charges: done + 1 };
  },
  {
    locks: getLocks,
    key: (event) => {
      if (typeof event?.invoiceId !== "string" || event.invoiceId === "") {
        throw new TypeError("chargeInvoice: event.invoiceId must be a non-empty string");
      }
      return `invoice:${event.invoiceId}`;
    },
    lease: INVOICE_LEASE_MS,
  },
);

/** Lease of the scheduled run's lock and of the report lock, ms (both auto-extended). */
const REPORT_LEASE_MS = 5_000;

/** Duration of the simulated rebuild: `REPORT_MS` from the environment, else 12 s. */
function reportMs(): number {
  const ms = Number(process.env.REPORT_MS);
  return Number.isFinite(ms) && ms > 0 ? ms : 12_000;
}

/**
 * Result of a {@link rebuildReport} run: `"rebuilt"`, or `"already_running"` when an on-demand
 * rebuild (`POST /reports/daily/rebuild`) held the report lock and stands in for this one. A
 * skipped duplicate returns a `ScheduledSkipped` instead (`{ skipped: true, reason, retryAfter }`).
 *
 * @example
 * { "status": "rebuilt", "steps": 10 }
 */
export type RebuildReportResult =
  | { readonly status: "rebuilt"; readonly steps: number }
  | { readonly status: "already_running" };

/**
 * Rebuild the daily report once per scheduled occurrence. Trigger it with an EventBridge rule (the
 * key is this function's invoked ARN + the rule ARN + the event's `time`) or an EventBridge
 * Scheduler schedule whose target
 * `Input` is `{"scheduleArn":"<aws.scheduler.schedule-arn>","scheduledTime":"<aws.scheduler.scheduled-time>"}`.
 * Duplicate deliveries and retries of a finished occurrence return `{ skipped: true, … }`; a
 * failed rebuild throws, so Lambda's asynchronous retry runs it again.
 *
 * @example
 * await rebuildReport({ "detail-type": "Scheduled Event", source: "aws.events", time: "2026-01-01T03:00:00Z",
 *   resources: ["arn:aws:events:us-east-1:123456789012:rule/daily-report"] }, context);
 * // { status: "rebuilt", steps: 10 }
 */
export const rebuildReport = dedupeScheduled(
  async (_event: unknown, context, run): Promise<RebuildReportResult> => {
    const report = await getLocks().tryAcquire(REPORT_KEY, {
      lease: REPORT_LEASE_MS,
      autoExtend: true,
      budget: budget.lambda(context),
    });
    if (report === null) return { status: "already_running" };
    try {
      // Stop if either lock is lost: the run's (a duplicate could start) or the report's.
      const signal = AbortSignal.any([run.signal, report.signal]);
      return { status: "rebuilt", steps: await rebuildDailyReport(reportMs(), signal) };
    } finally {
      await report.release();
    }
  },
  { locks: getLocks, lease: REPORT_LEASE_MS },
);
