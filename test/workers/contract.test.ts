/**
 * The adapter contract (`test/contract/cases.ts`) inside workerd against the shared dev cluster:
 * Hono `lock()`, `limit()` and `idempotency()` with a real `ExecutionContext` (an invocation is
 * over once its `waitUntil` work settled), Workers `dedupeScheduled` with a real `ScheduledController`, and
 * `once()`. The same table runs in Node in `test/contract/contract.test.ts`.
 */
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { runContract } from "../contract/cases";
import { ContractCluster } from "../contract/harness";
import { honoLimit } from "../contract/limit-surfaces";
import {
  honoIdempotency,
  honoLock,
  onceSurface,
  type Runtime,
  workersDedupe,
} from "../contract/surfaces";
import { nodes } from "./support/cluster";

const cluster = new ContractCluster(nodes);

const workerd: Runtime = {
  name: "workerd",
  async honoCall(app, request) {
    const ctx = createExecutionContext();
    const res = await app.fetch(request, env, ctx);
    await res.arrayBuffer();
    await waitOnExecutionContext(ctx);
    return res;
  },
  async scheduled(handler, cron, scheduledTime) {
    const controller = createScheduledController({ cron, scheduledTime });
    const ctx = createExecutionContext();
    try {
      await handler(controller as never, env as never, ctx as never);
    } finally {
      await waitOnExecutionContext(ctx);
    }
  },
};

runContract(
  [
    honoLock(workerd),
    honoLimit(workerd),
    honoIdempotency(workerd),
    workersDedupe(workerd),
    onceSurface(workerd),
  ],
  () => cluster,
);
