/**
 * The rows of glue of the adapter contract: one {@link Surface} per public wrapper that makes the
 * adapters' promises. Each maps the contract's job (`(lock) => answer`) onto the wrapper's own
 * shape and one invocation onto what the runtime does; nothing else. A new adapter gets the whole
 * contract (`cases.ts`) by adding a row here. Runtime-neutral: the {@link Runtime} says how a
 * request or a scheduled event is delivered (Node, or workerd with a real `ExecutionContext`).
 *
 * @module
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { idempotency, lock } from "../../src/adapters/hono/index";
import { limit } from "../../src/adapters/hono/limit";
import {
  dedupeScheduled as lambdaScheduled,
  type WithLockOptions,
  withIdempotency,
  withLock,
} from "../../src/adapters/lambda/index";
import { withLimit } from "../../src/adapters/lambda/with-limit";
import { dedupeScheduled as workersScheduled } from "../../src/adapters/workers/index";
import { type Lock, once } from "../../src/index";
import {
  type Build,
  type InnerLock,
  type Instance,
  type Invoked,
  type Job,
  lambdaContext,
  type Surface,
} from "./harness";

/** How a runtime delivers what the glue builds. */
export interface Runtime {
  /** `"node"` or `"workerd"`, for the test names. */
  readonly name: string;
  /** Deliver `request` to `app`; resolves with the response once its body was read and the invocation is over (`waitUntil` included). */
  honoCall(app: Hono, request: Request): Promise<Response>;
  /** Deliver one Cron Trigger event; resolves once the invocation is over (`waitUntil` included). */
  scheduled(
    handler: (controller: never, env: never, ctx: never) => Promise<void>,
    cron: string,
    scheduledTime: number,
  ): Promise<void>;
}

const REPLAYED = "idempotency-replayed";

/** The Hono handler running the contract's job under `c.var.lock`, `c.var.permit` or the claim. */
export function honoRoute(job: () => Job | undefined, ran: () => void) {
  // biome-ignore lint/suspicious/noExplicitAny: the route serves every middleware's variables
  return async (c: any) => {
    ran();
    const held: Lock = c.var.lock ?? c.var.permit ?? c.var.idempotencyClaim;
    const answer = await (job() as Job)(held);
    if (answer === "throw") throw new Error("job failed");
    if ("stream" in answer && answer.stream !== undefined) {
      const after = answer.stream;
      // A body produced after the handler returned: its producer runs under the lock too.
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await after(held);
          controller.enqueue(new TextEncoder().encode("streamed"));
          controller.close();
        },
      });
      return c.body(body, answer.status, { "content-type": "text/plain" });
    }
    return c.text("answer", answer.status);
  };
}

/** An instance of a Hono app: one route, one request shape. */
export function honoInstance(
  runtime: Runtime,
  app: Hono,
  request: () => Request,
  state: HonoState,
) {
  return {
    async invoke(job: Job) {
      state.job = job;
      state.ran = false;
      const res = await runtime.honoCall(app, request());
      return {
        ran: state.ran,
        outcome: res.status,
        replayed: res.headers.get(REPLAYED) === "true",
      };
    },
  } satisfies Instance;
}

export interface HonoState {
  job: Job | undefined;
  ran: boolean;
}

/** Hono `lock()`: a route under `lock({ key: "res:<id>" })`. */
export function honoLock(runtime: Runtime): Surface {
  const build = ({ locks, extra }: Build) => {
    const state: HonoState = { job: undefined, ran: false };
    const id = crypto.randomUUID();
    const app = new Hono();
    app.post(
      "/res/:id",
      lock({ locks, key: (c) => `res:${c.req.param("id")}`, ...extra }),
      honoRoute(
        () => state.job,
        () => (state.ran = true),
      ),
    );
    return { app, state, id };
  };
  return {
    name: `hono lock() on ${runtime.name}`,
    ends: "release",
    build(b) {
      const { app, state, id } = build(b);
      return honoInstance(
        runtime,
        app,
        () => new Request(`https://app.test/res/${id}?sig=s3cr3t`, { method: "POST" }),
        state,
      );
    },
    construct: ({ locks, extra }) => lock({ locks, key: () => "k", ...extra }),
  };
}

/** Hono `idempotency()`: a route under `idempotency()`, one `Idempotency-Key` per instance. */
export function honoIdempotency(runtime: Runtime): Surface {
  const instance = (b: Build, inner?: InnerLock) => {
    const state: HonoState = { job: undefined, ran: false };
    const app = new Hono();
    const route = honoRoute(
      () => state.job,
      () => (state.ran = true),
    );
    const outer = idempotency({ locks: b.locks, ...b.extra });
    if (inner === undefined) app.post("/charge", outer, route);
    else {
      const answers = {
        onBusy: (c: Context) => c.text("come back later", inner.status as 200),
        onError: (c: Context) => c.text("come back later", inner.status as 200),
        onUnavailable: () => undefined,
      };
      const busy: MiddlewareHandler =
        inner.layer === "limit"
          ? limit({ locks: () => inner.locks(), key: inner.key, permits: 1, ...answers })
          : lock({ locks: () => inner.locks(), key: () => inner.key, ...answers });
      // The app's CORS layer between the two answers a copy of lock()'s response.
      const cors: MiddlewareHandler = async (c, next) => {
        await next();
        c.res = new Response(c.res.body, c.res);
        c.res.headers.set("access-control-allow-origin", "*");
      };
      if (inner.copy === true) app.post("/charge", outer, cors, busy, route);
      else app.post("/charge", outer, busy, route);
    }
    const key = crypto.randomUUID();
    const request = () =>
      new Request("https://app.test/charge?sig=s3cr3t", {
        method: "POST",
        headers: { "Idempotency-Key": key, "content-type": "application/json" },
        body: "{}",
      });
    return honoInstance(runtime, app, request, state);
  };
  return {
    name: `hono idempotency() on ${runtime.name}`,
    ends: "complete",
    build: (b) => instance(b),
    construct: ({ locks, extra }) => idempotency({ locks, ...extra }),
    overLock: (b, inner) => instance(b, inner),
  };
}

/** A payload 2.0 POST with an `Idempotency-Key`. */
function httpEvent(key: string) {
  return {
    rawPath: "/charge",
    rawQueryString: "sig=s3cr3t",
    headers: { host: "fn.test", "idempotency-key": key, "content-type": "application/json" },
    requestContext: { http: { method: "POST" }, domainName: "fn.test" },
    body: "{}",
    isBase64Encoded: false,
  };
}

/** What a Lambda HTTP handler returns for the job's answer. */
export async function lambdaAnswer(job: Job, lock: Lock) {
  const answer = await job(lock);
  if (answer === "throw") throw new Error("job failed");
  return { statusCode: answer.status, body: "answer" };
}

/** Call a Lambda handler as the runtime would; a throw is the invocation's failure. */
export async function invokeLambda(
  handler: (event: never, context: never) => Promise<unknown>,
  event: unknown,
  ran: () => boolean,
): Promise<Invoked> {
  try {
    const result = (await handler(event as never, lambdaContext() as never)) as {
      statusCode?: number;
      headers?: Record<string, string>;
      skipped?: boolean;
    };
    const outcome = result?.skipped === true ? "skipped" : (result?.statusCode ?? "ok");
    return { ran: ran(), outcome, replayed: result?.headers?.[REPLAYED] === "true" };
  } catch {
    return { ran: ran(), outcome: "threw" as const, replayed: false };
  }
}

/** Lambda `withLock`: a handler under one key per instance. */
export function lambdaWithLock(): Surface {
  return {
    name: "lambda withLock",
    ends: "release",
    build({ locks, extra }) {
      const key = `res:${crypto.randomUUID()}`;
      let job: Job | undefined;
      let ran = false;
      const handler = withLock(
        async (_event: unknown, _context, held) => {
          ran = true;
          return lambdaAnswer(job as Job, held);
        },
        { locks, key: () => key, ...extra } as WithLockOptions<unknown, never>,
      );
      return {
        invoke(next) {
          job = next;
          ran = false;
          return invokeLambda(handler, {}, () => ran);
        },
      };
    },
    construct: ({ locks, extra }) =>
      withLock(async () => 1, { locks, key: () => "k", ...extra } as WithLockOptions<
        unknown,
        never
      >),
  };
}

/** Lambda `withIdempotency`: one `Idempotency-Key` per instance. */
export function lambdaWithIdempotency(): Surface {
  const instance = ({ locks, extra }: Build, inner?: InnerLock) => {
    const key = crypto.randomUUID();
    let job: Job | undefined;
    let ran = false;
    const run = async (held: Lock) => {
      ran = true;
      return lambdaAnswer(job as Job, held);
    };
    const onBusy = () => ({ statusCode: inner?.status as number, body: "come back later" });
    const guarded =
      inner === undefined
        ? (_event: unknown, _context: unknown, held: Lock | undefined) => run(held as Lock)
        : inner.layer === "limit"
          ? // A permit is a Lock without ticket(), which no job calls.
            withLimit(async (_event: unknown, _context, held) => run(held as unknown as Lock), {
              ...{ locks: () => inner.locks(), key: inner.key, permits: 1, onBusy },
            })
          : withLock(async (_event: unknown, _context, held) => run(held), {
              ...{ locks: () => inner.locks(), key: () => inner.key, onBusy },
            });
    // The app's CORS step between the two answers a copy of withLock's answer.
    const addCors = (answer: unknown) =>
      inner?.copy === true
        ? { ...(answer as object), headers: { "access-control-allow-origin": "*" } }
        : answer;
    const handler = withIdempotency(
      async (event, context, _claim) =>
        addCors(await guarded(event, context as never, _claim as Lock)),
      { locks, ...extra },
    );
    return {
      invoke(next: Job) {
        job = next;
        ran = false;
        return invokeLambda(handler as never, httpEvent(key), () => ran);
      },
    };
  };
  return {
    name: "lambda withIdempotency",
    ends: "complete",
    build: (b) => instance(b),
    construct: ({ locks, extra }) =>
      withIdempotency(async () => ({ statusCode: 200 }), { locks, ...extra }),
    overLock: (b, inner) => instance(b, inner),
  };
}

/** Lambda `dedupeScheduled`: one Scheduler occurrence per instance. */
export function lambdaDedupe(): Surface {
  return {
    name: "lambda dedupeScheduled",
    ends: "complete",
    build({ locks, extra }) {
      const event = {
        scheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/default/${crypto.randomUUID()}`,
        scheduledTime: "2026-01-01T03:00:00Z",
      };
      let job: Job | undefined;
      let ran = false;
      const handler = lambdaScheduled(
        async (_event: unknown, _context, held) => {
          ran = true;
          if ((await (job as Job)(held)) === "throw") throw new Error("job failed");
          return "done";
        },
        { locks, ...extra },
      );
      return {
        async invoke(next) {
          job = next;
          ran = false;
          return invokeLambda(handler as never, event, () => ran);
        },
      };
    },
    construct: ({ locks, extra }) => lambdaScheduled(async () => 1, { locks, ...extra }),
  };
}

/** Workers `dedupeScheduled`: one scheduled time per instance. */
export function workersDedupe(runtime: Runtime): Surface {
  return {
    name: `workers dedupeScheduled on ${runtime.name}`,
    ends: "complete",
    build({ locks, extra }) {
      const time = Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 1e9) * 60_000;
      let job: Job | undefined;
      let ran = false;
      let skipped = false;
      const handler = workersScheduled(
        async (_controller, _env, _ctx, held) => {
          ran = true;
          if ((await (job as Job)(held)) === "throw") throw new Error("job failed");
        },
        {
          locks,
          name: "contract",
          onSkip: () => {
            skipped = true;
          },
          ...extra,
        },
      );
      return {
        async invoke(next) {
          job = next;
          ran = false;
          skipped = false;
          try {
            await runtime.scheduled(handler as never, "0 3 * * *", time);
          } catch {
            return { ran, outcome: "threw", replayed: false } satisfies Invoked;
          }
          return { ran, outcome: skipped ? "skipped" : "ok", replayed: false } satisfies Invoked;
        },
      };
    },
    construct: ({ locks, extra }) =>
      workersScheduled(async () => undefined, { locks, name: "contract", ...extra }),
  };
}

/** `once()`: one key per instance. */
export function onceSurface(runtime: Runtime): Surface {
  return {
    name: `once() on ${runtime.name}`,
    ends: "complete",
    build({ locks, extra }) {
      const key = `job:${crypto.randomUUID()}`;
      return {
        async invoke(job) {
          let ran = false;
          try {
            const result = await once(
              locks,
              key,
              async (held) => {
                ran = true;
                if ((await job(held)) === "throw") throw new Error("job failed");
              },
              extra,
            );
            const outcome = result.status === "ran" ? "ok" : "skipped";
            return { ran, outcome, replayed: false } satisfies Invoked;
          } catch {
            return { ran, outcome: "threw", replayed: false } satisfies Invoked;
          }
        },
      };
    },
    construct: ({ locks, extra }) => once(locks, "k", async () => 1, extra as never),
  };
}
