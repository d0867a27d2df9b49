/**
 * The contract's rows of glue for the semaphore's adapters (docs/design/semaphore.md §4
 * "Adapters"): Hono `limit()` and Lambda `withLimit`, each with two permits unless a case asks for
 * another count (`extra.permits`). Imported from their source files: neither is re-exported by
 * the package entries yet. A permit is handed to the contract's jobs as the `Lock` they take: it
 * is one without `ticket()`, which no job calls.
 *
 * @module
 */
import { Hono } from "hono";
import { limit } from "../../src/adapters/hono/limit";
import { type WithLimitOptions, withLimit } from "../../src/adapters/lambda/with-limit";
import type { Lock } from "../../src/index";
import type { Job, Surface } from "./harness";
import type { Runtime } from "./surfaces";
import { type HonoState, honoInstance, honoRoute, invokeLambda, lambdaAnswer } from "./surfaces";

/** Permits of a surface's semaphore unless a case passes its own. */
const PERMITS = 2;

/** Hono `limit()`: a route under `limit({ key: (c) => "res:<id>", permits })`. */
export function honoLimit(runtime: Runtime): Surface {
  return {
    name: `hono limit() on ${runtime.name}`,
    ends: "release",
    build({ locks, extra }) {
      const state: HonoState = { job: undefined, ran: false };
      const id = crypto.randomUUID();
      const app = new Hono();
      app.post(
        "/res/:id",
        limit({ locks, key: (c) => `res:${c.req.param("id")}`, permits: PERMITS, ...extra }),
        honoRoute(
          () => state.job,
          () => (state.ran = true),
        ),
      );
      const request = () =>
        new Request(`https://app.test/res/${id}?sig=s3cr3t`, { method: "POST" });
      return honoInstance(runtime, app, request, state);
    },
    construct: ({ locks, extra }) => limit({ locks, key: "k", permits: PERMITS, ...extra }),
  };
}

/** Lambda `withLimit`: a handler under one semaphore name per instance. */
export function lambdaWithLimit(): Surface {
  return {
    name: "lambda withLimit",
    ends: "release",
    build({ locks, extra }) {
      const key = `res:${crypto.randomUUID()}`;
      let job: Job | undefined;
      let ran = false;
      const handler = withLimit(
        async (_event: unknown, _context, permit) => {
          ran = true;
          return lambdaAnswer(job as Job, permit as unknown as Lock);
        },
        { locks, key, permits: PERMITS, ...extra } as WithLimitOptions<unknown, never>,
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
      withLimit(async () => 1, { locks, key: "k", permits: PERMITS, ...extra } as WithLimitOptions<
        unknown,
        never
      >),
  };
}
