/**
 * `withIdempotency` at its edges, against a real 3-node dev cluster: replays are the first
 * answer as sent (a leading BOM, `isBase64Encoded`, every value of a multi-value header); ALB
 * events with multi-value headers on are deduplicated; a SigV4-signed retry (a new signature)
 * is the same caller, another access key another one; a released claim is gone from every node
 * before the invocation returns.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type HttpEvent, type HttpResult, withIdempotency } from "../../src/adapters/lambda";
import { createLocks } from "../../src/index";
import { fakeContext } from "../lambda/helpers";
import { resetCluster, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });
afterEach(() => resetCluster(dev.cluster));

function setup(answer: () => unknown, prefix = uniquePrefix("idem-lambda-edges")) {
  const locks = createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 2_000 });
  let runs = 0;
  const handler = withIdempotency(
    async () => {
      runs += 1;
      return answer();
    },
    { locks },
  );
  const call = (event: HttpEvent) => handler(event, fakeContext(20_000)) as Promise<HttpResult>;
  return { call, runs: () => runs };
}

const v1 = (key: string, headers: Record<string, string> = {}): HttpEvent => ({
  httpMethod: "POST",
  path: "/pay",
  headers: { "Idempotency-Key": key, ...headers },
  body: "x",
  isBase64Encoded: false,
});

describe("withIdempotency: a replay is the first answer as sent", () => {
  it("a leading UTF-8 BOM is kept", async () => {
    const body = "\ufeffa,b\n1,2";
    const { call, runs } = setup(() => ({
      statusCode: 200,
      headers: { "content-type": "text/csv" },
      body,
    }));
    expect((await call(v1("bom"))).body).toBe(body);
    const replay = await call(v1("bom"));
    expect(replay.headers?.["idempotency-replayed"]).toBe("true");
    expect(replay.body).toBe(body);
    expect(runs()).toBe(1);
  });

  it("an isBase64Encoded answer replays base64-encoded, byte for byte", async () => {
    const body = btoa("%PDF-1.4 hello");
    const { call } = setup(() => ({
      statusCode: 200,
      headers: { "content-type": "application/pdf" },
      body,
      isBase64Encoded: true,
    }));
    await call(v1("b64"));
    const replay = await call(v1("b64"));
    expect(replay).toMatchObject({ statusCode: 200, body, isBase64Encoded: true });
  });

  it("every value of a multi-value header is kept", async () => {
    const { call } = setup(() => ({
      statusCode: 201,
      headers: { "content-type": "application/json" },
      multiValueHeaders: { "Cache-Control": ["no-store", "private"], "Set-Cookie": ["a=1"] },
      body: "{}",
    }));
    await call(v1("mv"));
    const replay = await call(v1("mv"));
    expect(replay.headers?.["cache-control"]).toBe("no-store, private");
    expect(JSON.stringify(replay)).not.toContain("a=1");
  });
});

describe("withIdempotency: ALB events with multi-value headers on", () => {
  it("are deduplicated, and answered in multiValueHeaders", async () => {
    const { call, runs } = setup(() => ({ statusCode: 201, body: "charged" }));
    const alb = (key: string): HttpEvent =>
      ({
        httpMethod: "POST",
        path: "/pay",
        multiValueHeaders: { "idempotency-key": [key] },
        multiValueQueryStringParameters: {},
        body: "x",
        isBase64Encoded: false,
        requestContext: { elb: { targetGroupArn: "arn:tg" } },
      }) as HttpEvent;
    await call(alb("k"));
    const retry = await call(alb("k"));
    expect(retry.statusCode).toBe(201);
    expect(retry.multiValueHeaders?.["idempotency-replayed"]).toEqual(["true"]);
    expect(runs()).toBe(1);
  });
});

describe("withIdempotency: SigV4-signed requests", () => {
  const signed = (akid: string, second: string) => ({
    Authorization: `AWS4-HMAC-SHA256 Credential=${akid}/20261125/us-east-1/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=${second.repeat(64)}`,
    "X-Amz-Date": `20261125T1730${second}0Z`,
  });

  it("a re-signed retry replays; another access key is another caller", async () => {
    let n = 0;
    const { call, runs } = setup(() => ({ statusCode: 201, body: `run ${++n}` }));
    expect((await call(v1("sig", signed("AKIDALICE", "1")))).body).toBe("run 1");
    const retry = await call(v1("sig", signed("AKIDALICE", "2")));
    expect(retry.headers?.["idempotency-replayed"]).toBe("true");
    expect(retry.body).toBe("run 1");
    const bob = await call(v1("sig", signed("AKIDBOB", "1")));
    expect(bob.headers?.["idempotency-replayed"]).toBeUndefined();
    expect(bob.body).toBe("run 2");
    expect(runs()).toBe(2);
  });
});

describe("withIdempotency: a released claim", () => {
  it.each([
    ["a 500", false],
    ["a throw", true],
  ])(
    "after %s, the claim is gone from every node before the invocation returns",
    async (_, throws) => {
      const prefix = uniquePrefix("idem-lambda-settled");
      let claimKey = "";
      const { call } = setup(async () => {
        [claimKey = ""] = (await dev.direct(0).keys(`${prefix}idempotency:*`)).filter(
          (key) => !key.endsWith(":wait"),
        );
        // The next request on node 2, the release, answers 200 ms late.
        dev.cluster.controls[2]?.inject({ kind: "latency", ms: 200, count: 1 });
        if (throws) throw new Error("boom");
        return { statusCode: 500, body: "failed" };
      }, prefix);
      await call(v1("k")).catch(() => undefined);
      expect(claimKey).not.toBe("");
      const present = await Promise.all([0, 1, 2].map((i) => dev.direct(i).exists(claimKey)));
      expect(present).toEqual([0, 0, 0]);
    },
  );
});
