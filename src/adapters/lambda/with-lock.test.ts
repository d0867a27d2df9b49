import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context, Handler } from "aws-lambda";
import { describe, expect, expectTypeOf, it } from "vitest";
import { isConfigurationError } from "../../errors";
import type { Lock } from "../../lock";
import { createLocks } from "../../lock";
import { type LambdaContext, type LambdaHandler, withLock } from "./index";

// Never contacted: wrapping validates options only; the invalid-context case fails before any
// node request.
const locks = createLocks({ nodes: [{ url: "http://127.0.0.1:9", token: "unused" }] });
const work = async () => "ok";
const key = () => "k";

function configurationOption(wrap: () => unknown): string | undefined {
  try {
    wrap();
  } catch (error) {
    if (isConfigurationError(error)) return error.option;
    throw error;
  }
  return undefined;
}

describe("withLock options", () => {
  it.each([
    ["handler", () => withLock("nope" as never, { locks, key })],
    ["options", () => withLock(work, null as never)],
    ["locks", () => withLock(work, { locks: {} as never, key })],
    ["locks", () => withLock(work, { key } as never)],
    ["key", () => withLock(work, { locks, key: "k" as never })],
    ["lease", () => withLock(work, { locks, key, lease: 0 })],
    ["lease", () => withLock(work, { locks, key, lease: 1.5 })],
    ["wait", () => withLock(work, { locks, key, wait: -1 })],
    ["margin", () => withLock(work, { locks, key, margin: Number.NaN })],
    ["reserve", () => withLock(work, { locks, key, reserve: -5 })],
    ["onBusy", () => withLock(work, { locks, key, onBusy: 409 as never })],
    ["budget", () => withLock(work, { locks, key, budget: {} } as never)],
  ])("rejects a bad `%s` when wrapping", (option, wrap) => {
    expect(configurationOption(wrap)).toBe(option);
  });

  it("accepts a valid configuration and returns a two-parameter async handler", () => {
    const handler = withLock(work, {
      locks: () => locks,
      key: async () => "k",
      lease: 30_000,
      wait: 0,
      margin: 0,
      reserve: 1_000,
      onBusy: () => "busy",
    });
    expect(typeof handler).toBe("function");
    // The Node.js runtime treats handlers with a third parameter as callback style.
    expect(handler.length).toBe(2);
  });

  it("an invocation without getRemainingTimeInMillis fails with ConfigurationError `context`", async () => {
    const handler = withLock(work, { locks, key });
    const error = await handler({}, {} as LambdaContext).catch((e: unknown) => e);
    expect(isConfigurationError(error) && error.option).toBe("context");
  });
});

describe("withLock types", () => {
  it("fits Handler<TEvent, TResult> of @types/aws-lambda", () => {
    type Charge = { invoiceId: string };
    const charge = withLock(
      async (event: Charge, context, lock) => {
        expectTypeOf(context).toEqualTypeOf<LambdaContext>();
        expectTypeOf(lock).toEqualTypeOf<Lock>();
        return { charged: event.invoiceId };
      },
      { locks, key: (event) => `invoice:${event.invoiceId}` },
    );
    expectTypeOf(charge).toEqualTypeOf<LambdaHandler<Charge, { charged: string }>>();
    expectTypeOf(charge).toExtend<Handler<Charge, { charged: string }>>();

    const http: Handler<APIGatewayProxyEventV2, APIGatewayProxyResultV2> = withLock(
      async (
        event: APIGatewayProxyEventV2,
        _context: Context,
      ): Promise<APIGatewayProxyResultV2> => ({
        statusCode: 200,
        body: event.rawPath,
      }),
      {
        locks,
        key: (event) => event.rawPath,
        onBusy: (_event, _context, error) => ({
          statusCode: 409,
          headers: { "retry-after": String(Math.ceil(error.retryAfter / 1000)) },
        }),
      },
    );
    expect(typeof http).toBe("function");
  });
});
