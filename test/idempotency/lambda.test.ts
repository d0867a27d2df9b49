/**
 * `withIdempotency` on AWS Lambda HTTP events (payload 1.0 and 2.0) against a real dev cluster;
 * and the example app's charge route through hono's AWS Lambda adapter.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type HttpEventV1, type HttpEventV2, withIdempotency } from "../../src/adapters/lambda";
import { createLocks } from "../../src/index";
import { fakeContext } from "../lambda/helpers";
import { eventually, resetCluster, sleep, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });
afterEach(() => {
  for (const control of dev.cluster.controls) control.resume();
  resetCluster(dev.cluster);
});

const v2 = (
  key: string | undefined,
  body = '{"amount":5}',
  extra: Partial<HttpEventV2> = {},
): HttpEventV2 => ({
  rawPath: "/charges",
  rawQueryString: "invoice=7",
  headers: {
    "content-type": "application/json",
    ...(key === undefined ? {} : { "idempotency-key": key }),
  },
  cookies: ["session=abc"],
  requestContext: { http: { method: "POST" } },
  body,
  isBase64Encoded: false,
  ...extra,
});

const v1 = (key: string, body = '{"amount":5}'): HttpEventV1 => ({
  httpMethod: "POST",
  path: "/charges",
  headers: { "Idempotency-Key": key, Authorization: "Bearer alice" },
  queryStringParameters: { invoice: "7" },
  body: btoa(body),
  isBase64Encoded: true,
});

function setup() {
  const locks = createLocks({ nodes: dev.cluster.nodes, prefix: uniquePrefix("idem-lambda") });
  let runs = 0;
  let status = 201;
  // A test may hold the handler open until its duplicate has been answered.
  let gate: Promise<unknown> = Promise.resolve();
  const handler = withIdempotency(
    async (event: HttpEventV1 | HttpEventV2, _context, lock) => {
      runs += 1;
      expect(lock?.signal.aborted ?? false).toBe(false);
      await sleep(100);
      await gate;
      return {
        statusCode: status,
        headers: { "content-type": "application/json", "set-cookie": "s=1" },
        body: JSON.stringify({ run: runs, body: event.body }),
      };
    },
    { locks },
  );
  return {
    handler,
    runs: () => runs,
    setStatus: (s: number) => (status = s),
    holdUntil: (p: Promise<unknown>) => (gate = p),
  };
}

describe("withIdempotency (Lambda HTTP events)", () => {
  it("payload 2.0: first runs, a retry is replayed, a concurrent duplicate gets 409", async () => {
    const { handler, runs, holdUntil } = setup();
    // The duplicate is sent once the first one runs, and the first ends only after the
    // duplicate was answered: the order does not depend on the machine's speed.
    let answered: () => void = () => undefined;
    holdUntil(new Promise<void>((resolve) => (answered = resolve)));
    const pending = handler(v2('"k1"'), fakeContext(10_000));
    await eventually(() => runs() === 1);
    const duplicate = await handler(v2('"k1"'), fakeContext(10_000));
    answered();
    const first = await pending;
    expect(first).toMatchObject({ statusCode: 201 });
    expect(duplicate).toMatchObject({
      statusCode: 409,
      headers: { "content-type": "application/problem+json", "retry-after": expect.any(String) },
    });
    const replay = await handler(v2('"k1"'), fakeContext(10_000));
    expect(replay).toEqual({
      statusCode: 201,
      headers: { "content-type": "application/json", "idempotency-replayed": "true" },
      body: (first as { body: string }).body,
    });
    expect(runs()).toBe(1);
  });

  it("payload 1.0 (REST API, base64 body): replay, 422 for another body, 400 for a bad key", async () => {
    const { handler, runs } = setup();
    const first = await handler(v1('"k2"'), fakeContext(10_000));
    const again = await handler(v1('"k2"'), fakeContext(10_000));
    expect((again as { headers: Record<string, string> }).headers["idempotency-replayed"]).toBe(
      "true",
    );
    expect((again as { body: string }).body).toBe((first as { body: string }).body);
    expect(await handler(v1('"k2"', '{"amount":500}'), fakeContext(10_000))).toMatchObject({
      statusCode: 422,
    });
    expect(await handler(v1('"unterminated'), fakeContext(10_000))).toMatchObject({
      statusCode: 400,
    });
    expect(runs()).toBe(1);
  });

  it("no key passes through; a 5xx is not kept (the retry runs); callers are scoped by cookie", async () => {
    const { handler, runs, setStatus } = setup();
    await handler(v2(undefined), fakeContext(10_000));
    expect(runs()).toBe(1);
    setStatus(503);
    expect(await handler(v2('"k3"'), fakeContext(10_000))).toMatchObject({ statusCode: 503 });
    setStatus(201);
    expect(await handler(v2('"k3"'), fakeContext(10_000))).toMatchObject({ statusCode: 201 });
    expect(runs()).toBe(3);
    // Another session (cookies): the same key is another caller's, so it runs for them too.
    await handler(v2('"k3"', '{"amount":5}', { cookies: ["session=other"] }), fakeContext(10_000));
    expect(runs()).toBe(4);
  });

  it("a majority of nodes down → 503, handler not run", async () => {
    const { handler, runs } = setup();
    dev.cluster.controls[0]?.pause();
    dev.cluster.controls[1]?.pause();
    expect(await handler(v2('"k4"'), fakeContext(10_000))).toMatchObject({ statusCode: 503 });
    expect(runs()).toBe(0);
  });
});
