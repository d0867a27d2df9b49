/**
 * What an HTTP client sees from the idempotency layer's defaults, through Hono (Node) and the
 * Lambda adapter against a real 3-node dev cluster: bare and quoted keys are the same key; the
 * default scope isolates the common credential headers and session cookies and ignores other
 * cookies; a 409 "in progress" says `Retry-After: 1`, not the claim's lease; a 503 names no node
 * unless the app opts in.
 */
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { idempotency } from "../../src/adapters/hono";
import { type HttpEventV2, withIdempotency } from "../../src/adapters/lambda";
import { createLocks, isConfigurationError } from "../../src/index";
import { fakeContext } from "../lambda/helpers";
import { resetCluster, sleep, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const dev = useDevCluster({ nodes: 3 });

afterEach(() => {
  for (const control of dev.cluster.controls) control.resume();
  resetCluster(dev.cluster);
});

type Options = Omit<Parameters<typeof idempotency>[0], "locks">;

const newLocks = (lease = 10_000) =>
  createLocks({
    nodes: dev.cluster.nodes,
    prefix: uniquePrefix("idem-defaults"),
    requestTimeout: 300,
    lease,
  });

/** POST /charge answers 201 with who ran it (the `x-tenant` header) and the run number. */
function honoApp(options: Options = {}, slowMs = 0) {
  const runs: string[] = [];
  const app = new Hono();
  app.post("/charge", idempotency({ locks: newLocks(), ...options }), async (c) => {
    runs.push(c.req.header("x-tenant") ?? "?");
    if (slowMs > 0) await sleep(slowMs);
    return c.json({ run: runs.length, tenant: c.req.header("x-tenant") }, 201);
  });
  const send = (key: string, headers: Record<string, string> = {}) =>
    app.request("/charge", {
      method: "POST",
      body: "amount=5",
      headers: { "Idempotency-Key": key, ...headers },
    });
  return { runs, send };
}

function lambdaHandler(options: Omit<Parameters<typeof withIdempotency>[1], "locks"> = {}) {
  const runs: string[] = [];
  const handler = withIdempotency(
    async (event: HttpEventV2) => {
      runs.push(event.headers?.["x-tenant"] ?? "?");
      await sleep(150);
      return { statusCode: 201, body: JSON.stringify({ run: runs.length }) };
    },
    { locks: newLocks(), ...options },
  );
  return { runs, handler };
}

const v2 = (
  key: string,
  headers: Record<string, string> = {},
  cookies?: string[],
): HttpEventV2 => ({
  rawPath: "/charge",
  rawQueryString: "",
  headers: { "idempotency-key": key, ...headers },
  ...(cookies === undefined ? {} : { cookies }),
  requestContext: { http: { method: "POST" } },
  body: '{"amount":5}',
  isBase64Encoded: false,
});

const replayed = (res: Response) => res.headers.get("idempotency-replayed");

describe("Idempotency-Key: bare keys are accepted", () => {
  it("Hono: a bare UUID runs once and replays; its quoted form is the same key", async () => {
    const { runs, send } = honoApp();
    const key = "8e03978e-40d5-43e8-bc93-6894a57f9324";
    const first = await send(key);
    expect([first.status, replayed(first)]).toEqual([201, null]);
    const bare = await send(key);
    expect([bare.status, replayed(bare)]).toEqual([201, "true"]);
    const quoted = await send(`"${key}"`);
    expect([quoted.status, replayed(quoted)]).toEqual([201, "true"]);
    expect(await quoted.json()).toEqual(await first.json());
    expect(runs).toHaveLength(1);
  });

  it.each([
    ["a broken quoted string", '"abc', "not a structured-field string"],
    ["a bare key with a quote", 'ab"c', 'a " in an unquoted key'],
    ["a bare non-ASCII key", "kéy", "printable ASCII"],
    ["a bare key over 255", "k".repeat(256), "longer than 255"],
  ])("Hono: %s → 400 saying why, handler not run", async (_name, key, why) => {
    const { runs, send } = honoApp();
    const res = await send(key);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(((await res.json()) as { detail: string }).detail).toContain(why);
    expect(runs).toHaveLength(0);
  });

  it("Lambda: a bare key runs once and replays; a bad one is 400", async () => {
    const { runs, handler } = lambdaHandler();
    expect(await handler(v2("order-42"), fakeContext(10_000))).toMatchObject({ statusCode: 201 });
    const replay = await handler(v2('"order-42"'), fakeContext(10_000));
    expect(replay).toMatchObject({ statusCode: 201, headers: { "idempotency-replayed": "true" } });
    expect(await handler(v2('order"42'), fakeContext(10_000))).toMatchObject({ statusCode: 400 });
    expect(runs).toHaveLength(1);
  });
});

describe("the default scope", () => {
  it.each(["x-api-key", "api-key", "x-auth-token", "x-access-token"])(
    "Hono: two tenants with %s and the same key and body are isolated",
    async (header) => {
      const { runs, send } = honoApp();
      const a = await send('"same"', { [header]: "key-of-A", "x-tenant": "A" });
      const b = await send('"same"', { [header]: "key-of-B", "x-tenant": "B" });
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(replayed(b)).toBeNull();
      expect(await b.json()).toEqual({ run: 2, tenant: "B" });
      expect(runs).toEqual(["A", "B"]);
      // Each tenant's retry gets its own response.
      const retryA = await send('"same"', { [header]: "key-of-A", "x-tenant": "A" });
      expect([replayed(retryA), await retryA.json()]).toEqual(["true", { run: 1, tenant: "A" }]);
      expect(runs).toHaveLength(2);
    },
  );

  it("Lambda: two tenants with x-api-key and the same key and body are isolated", async () => {
    const { runs, handler } = lambdaHandler();
    const a = await handler(v2("same", { "x-api-key": "A", "x-tenant": "A" }), fakeContext(10_000));
    const b = await handler(v2("same", { "x-api-key": "B", "x-tenant": "B" }), fakeContext(10_000));
    expect([a, b]).toMatchObject([{ statusCode: 201 }, { statusCode: 201 }]);
    expect((b as { headers?: Record<string, string> }).headers?.["idempotency-replayed"]).toBe(
      undefined,
    );
    expect(runs).toEqual(["A", "B"]);
  });

  it("Hono: a changed unrelated cookie does not split a caller (Authorization or a session cookie)", async () => {
    const { runs, send } = honoApp();
    const auth = { Authorization: "Bearer alice" };
    await send('"k1"', { ...auth, Cookie: "AWSALB=one; _ga=GA1.1" });
    const retry = await send('"k1"', { ...auth, Cookie: "AWSALB=two; _ga=GA1.2; theme=dark" });
    expect(replayed(retry)).toBe("true");
    await send('"k2"', { Cookie: "connect.sid=s%3Aalice; _ga=GA1.1" });
    const again = await send('"k2"', { Cookie: "_ga=GA1.9; connect.sid=s%3Aalice" });
    expect(replayed(again)).toBe("true");
    expect(runs).toHaveLength(2);
  });

  it("Lambda: a changed unrelated cookie does not split a caller", async () => {
    const { runs, handler } = lambdaHandler();
    const auth = { authorization: "Bearer alice" };
    await handler(v2("k", auth, ["AWSALB=one"]), fakeContext(10_000));
    const retry = await handler(v2("k", auth, ["AWSALB=two", "_ga=x"]), fakeContext(10_000));
    expect(retry).toMatchObject({ statusCode: 201, headers: { "idempotency-replayed": "true" } });
    expect(runs).toHaveLength(1);
  });

  it("Hono: cookie sessions — listed names, an unlisted name (whole Cookie header), scopeCookies", async () => {
    // A framework's session cookie: two users are isolated.
    const listed = honoApp();
    await listed.send('"k"', { Cookie: "sessionid=alice", "x-tenant": "alice" });
    const bob = await listed.send('"k"', { Cookie: "sessionid=bob", "x-tenant": "bob" });
    expect(replayed(bob)).toBeNull();
    expect(listed.runs).toEqual(["alice", "bob"]);

    // A session cookie under a name not listed, and no credential header: the whole Cookie
    // header is the scope, so users are still isolated.
    const unlisted = honoApp();
    await unlisted.send('"k"', { Cookie: "myapp_sess=alice", "x-tenant": "alice" });
    const other = await unlisted.send('"k"', { Cookie: "myapp_sess=bob", "x-tenant": "bob" });
    expect(replayed(other)).toBeNull();
    expect(unlisted.runs).toEqual(["alice", "bob"]);

    // Naming it in scopeCookies: isolated by it, and other cookies no longer split.
    const named = honoApp({ scopeCookies: ["myapp_sess"] });
    await named.send('"k"', { Cookie: "myapp_sess=alice; _ga=1", "x-tenant": "alice" });
    const retry = await named.send('"k"', {
      Cookie: "_ga=2; myapp_sess=alice",
      "x-tenant": "alice",
    });
    expect(replayed(retry)).toBe("true");
    const bobNamed = await named.send('"k"', {
      Cookie: "myapp_sess=bob; _ga=2",
      "x-tenant": "bob",
    });
    expect(replayed(bobNamed)).toBeNull();
    expect(named.runs).toEqual(["alice", "bob"]);
  });

  it("scopeHeaders adds a credential header; scope excludes scopeHeaders/scopeCookies", async () => {
    const { runs, send } = honoApp({ scopeHeaders: ["x-tenant-key"] });
    await send('"k"', { "x-tenant-key": "A", "x-tenant": "A" });
    const b = await send('"k"', { "x-tenant-key": "B", "x-tenant": "B" });
    expect(replayed(b)).toBeNull();
    expect(runs).toEqual(["A", "B"]);
    const error = (() => {
      try {
        idempotency({ locks: newLocks(), scope: () => "u", scopeCookies: ["sid"] });
      } catch (e) {
        return e;
      }
    })();
    expect(isConfigurationError(error) && error.option).toBe("scopeCookies");
  });
});

describe("Retry-After of a request still in progress", () => {
  it("Hono: 409 with Retry-After: 1, not the claim's 10 s lease; retryAfter sets it", async () => {
    for (const [options, expected] of [
      [{}, "1"],
      [{ retryAfter: 2_500 }, "3"],
    ] as const) {
      const { runs, send } = honoApp(options, 300);
      const [first, duplicate] = await Promise.all([
        send('"k"'),
        sleep(50).then(() => send('"k"')),
      ]);
      expect([first.status, duplicate.status]).toEqual([201, 409]);
      expect(duplicate.headers.get("retry-after")).toBe(expected);
      const detail = ((await duplicate.json()) as { detail: string }).detail;
      expect(detail).toContain(`retry in ${expected} s`);
      expect(runs).toHaveLength(1);
    }
  });

  it("Lambda: 409 with Retry-After: 1", async () => {
    const { handler } = lambdaHandler();
    const [first, duplicate] = await Promise.all([
      handler(v2("k"), fakeContext(20_000)),
      sleep(40).then(() => handler(v2("k"), fakeContext(20_000))),
    ]);
    expect(first).toMatchObject({ statusCode: 201 });
    expect(duplicate).toMatchObject({ statusCode: 409, headers: { "retry-after": "1" } });
  });
});

describe("503 problem details", () => {
  const hosts = () => dev.cluster.nodes.map((n) => new URL(n.url).host);

  it("Hono: generic by default; the node details with exposeDetails: true", async () => {
    dev.cluster.controls[1]?.pause();
    dev.cluster.controls[2]?.pause();
    const plain = await honoApp().send('"k"');
    expect(plain.status).toBe(503);
    const body = (await plain.json()) as { title: string; detail: string };
    expect(body.title).toBe("Lock service unavailable");
    expect(body.detail).toBe(
      "Too few lock nodes answered to claim this Idempotency-Key; it did not run.",
    );
    for (const host of hosts()) expect(body.detail).not.toContain(host);
    const exposed = await honoApp({ exposeDetails: true }).send('"k"');
    const detail = ((await exposed.json()) as { detail: string }).detail;
    expect(detail).toContain(`node 1 (${hosts()[1]})`);
  });

  it("Lambda: generic by default", async () => {
    dev.cluster.controls[0]?.pause();
    dev.cluster.controls[1]?.pause();
    const { handler, runs } = lambdaHandler();
    const result = (await handler(v2("k"), fakeContext(10_000))) as {
      statusCode: number;
      body: string;
    };
    expect(result.statusCode).toBe(503);
    const detail = (JSON.parse(result.body) as { detail: string }).detail;
    expect(detail).toBe(
      "Too few lock nodes answered to claim this Idempotency-Key; it did not run.",
    );
    for (const host of hosts()) expect(result.body).not.toContain(host);
    expect(runs).toHaveLength(0);
  });
});

describe("header names in options are HTTP tokens", () => {
  const refusal = (build: () => unknown) => {
    try {
      build();
    } catch (e) {
      return e;
    }
    return undefined;
  };

  it("headers / scopeHeaders: a name no header can have is refused, naming the option and the value (Hono, Lambda)", () => {
    const job = async () => ({ statusCode: 201 });
    for (const bad of ["content-type ", " set-cookie", "x y", "x:y", "é"]) {
      for (const option of ["headers", "scopeHeaders"] as const) {
        for (const build of [
          () => idempotency({ locks: newLocks(), [option]: [bad] }),
          () => withIdempotency(job, { locks: newLocks(), [option]: [bad] }),
        ]) {
          const error = refusal(build);
          expect(isConfigurationError(error), `${option} ${JSON.stringify(bad)}`).toBe(true);
          expect((error as { option: string }).option).toBe(option);
          expect((error as Error).message).toContain(JSON.stringify(bad));
        }
      }
    }
    // Tokens of every allowed character class are taken, in any case.
    const good = ["X-Request-Id", "x_custom.1", "!#$%&'*+-.^_`|~"];
    expect(refusal(() => idempotency({ locks: newLocks(), headers: good }))).toBeUndefined();
    expect(refusal(() => withIdempotency(job, { locks: newLocks(), scopeHeaders: good }))).toBe(
      undefined,
    );
  });
});
