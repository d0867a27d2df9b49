/**
 * Which answers `withIdempotency` keeps, and how it replays them, against a real 3-node dev
 * cluster: bodiless statuses (204, 205, 304) replay as themselves with an empty body; transient
 * answers (408, 409, 425, 429) are never kept, so a retry runs the handler.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type HttpEventV2, withIdempotency } from "../../src/adapters/lambda";
import { createLocks } from "../../src/index";
import { fakeContext } from "../lambda/helpers";
import { resetCluster, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });
afterEach(() => resetCluster(dev.cluster));

const event = (key: string): HttpEventV2 => ({
  rawPath: "/items/7",
  rawQueryString: "",
  headers: { "idempotency-key": key },
  requestContext: { http: { method: "PATCH" } },
  body: '{"name":"x"}',
  isBase64Encoded: false,
});

function setup(statusOf: (run: number) => number) {
  const locks = createLocks({ nodes: dev.cluster.nodes, prefix: uniquePrefix("idem-lambda-a") });
  let runs = 0;
  const handler = withIdempotency(
    async () => {
      runs += 1;
      return { statusCode: statusOf(runs), headers: { etag: `"v${runs}"` }, body: "" };
    },
    { locks },
  );
  return { handler, runs: () => runs };
}

describe("withIdempotency: which answers are kept", () => {
  it.each([204, 205, 304])("a stored %i replays with no body", async (status) => {
    const { handler, runs } = setup(() => status);
    expect(await handler(event('"k"'), fakeContext(10_000))).toMatchObject({ statusCode: status });
    const replay = await handler(event('"k"'), fakeContext(10_000));
    expect(replay).toEqual({
      statusCode: status,
      headers: { etag: '"v1"', "idempotency-replayed": "true" },
      body: "",
    });
    expect(runs()).toBe(1);
  });

  it.each([408, 409, 425, 429])("a %i is not kept: the retry runs", async (status) => {
    const { handler, runs } = setup((run) => (run === 1 ? status : 200));
    expect(await handler(event('"k"'), fakeContext(10_000))).toMatchObject({ statusCode: status });
    expect(await handler(event('"k"'), fakeContext(10_000))).toMatchObject({ statusCode: 200 });
    expect(runs()).toBe(2);
  });
});
