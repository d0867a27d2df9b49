/**
 * Secrets never leak. Every error path and event of the library is driven with distinctive REST
 * tokens (`tok-SECRET-<random>`), real node tokens and the lock tokens of every round (read off
 * the wire with MONITOR); no error message, `cause` chain (AggregateError `errors` and outcome
 * objects included), `onEvent` payload or console output may contain any of them. Then the dev
 * endpoint: loopback by default, and a missing or wrong token is rejected on every route, the
 * admin routes included, with no side effect.
 */
import { networkInterfaces } from "node:os";
import { Redis as UpstashRedis } from "@upstash/redis";
import type { Redis as IORedis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenCheck } from "../../src/dev/auth";
import {
  budget,
  createLocks,
  isBudgetExhaustedError,
  isLockBusyError,
  isLockLostError,
  isQuorumError,
  type LockEvent,
  type NodeInput,
} from "../../src/index";
import { useDevCluster } from "../support/dev-cluster";
import { closedPort, type FakeUpstream, startFakeUpstream } from "./support/fake-upstream";
import { allStrings, ConsoleSpy, CrashWatch, settle, stringifyAll } from "./support/inspect";

const dev = useDevCluster({ nodes: 3 });
const secret = () => `tok-SECRET-${crypto.randomUUID()}`;

/** Everything the library handed back or emitted, checked at the end against every secret. */
const observed: unknown[] = [];
const events: LockEvent[] = [];
const secrets = new Set<string>();
/** Lock tokens read off the wire (EVAL/EVALSHA ARGV[1]) on the real nodes. */
const wireTokens = new Set<string>();
const consoleSpy = new ConsoleSpy();
const watch = new CrashWatch();
const monitors: IORedis[] = [];
const fakes: FakeUpstream[] = [];

beforeAll(async () => {
  consoleSpy.install();
  watch.install();
  for (const node of dev.cluster.nodes) secrets.add(node.token);
  for (let i = 0; i < 3; i++) {
    const monitor = await dev.direct(i).monitor();
    monitor.on("monitor", (_time: string, args: string[]) => {
      const command = String(args[0]).toLowerCase();
      if (command === "eval" || command === "evalsha") {
        // command, script, numkeys, the keys, then the token (ARGV[1])
        const token = args[3 + Number(args[2])];
        if (token !== undefined && /^[0-9a-f]{32}$/.test(token)) wireTokens.add(token);
      }
    });
    monitors.push(monitor);
  }
});

afterAll(async () => {
  for (const monitor of monitors) monitor.disconnect();
  for (const fake of fakes) await fake.close();
  consoleSpy.uninstall();
  watch.uninstall();
});

function leaks(value: unknown, extra: Iterable<string> = []): string[] {
  const text = `${allStrings(value).join("\n")}\n${stringifyAll(value)}`;
  return [...secrets, ...wireTokens, ...extra].filter((s) => text.includes(s));
}

const prefix = () => `sec:${crypto.randomUUID()}:`;
const onEvent = (e: LockEvent) => {
  events.push(e);
};

async function fake(kind: Parameters<typeof startFakeUpstream>[0]): Promise<FakeUpstream> {
  const f = await startFakeUpstream(kind);
  fakes.push(f);
  return f;
}

/** Lock tokens a fake upstream received in EVAL/EVALSHA bodies. */
function tokensSeenBy(f: FakeUpstream): string[] {
  return f.received.flatMap(({ body }) => {
    try {
      const parsed = JSON.parse(body) as unknown[];
      const commands = Array.isArray(parsed[0]) ? (parsed as unknown[][]) : [parsed];
      return commands
        .map((c) => String(c[3 + Number(c[2])] ?? ""))
        .filter((t) => /^[0-9a-f]{32}$/.test(t));
    } catch {
      return [];
    }
  });
}

describe("library errors and events carry no token", () => {
  it("configuration errors never echo a URL's credentials or query", () => {
    const token = secret();
    secrets.add(token);
    const cases: unknown[] = [
      { nodes: [{ url: `${token} not a url`, token }] },
      {
        nodes: [
          { url: `http://user:${token}@127.0.0.1:1`, token },
          { url: `http://127.0.0.1:1/?_token=${token}`, token },
        ],
      },
      {
        nodes: [
          { url: `http://127.0.0.1:2/?_token=${token}`, token },
          { url: "http://127.0.0.1:2/", token },
        ],
      },
      { nodes: [{ url: "http://127.0.0.1:3", token: "" }] },
    ];
    for (const options of cases) {
      let error: unknown;
      try {
        createLocks(options as never);
      } catch (e) {
        error = e;
      }
      expect(error).toBeDefined();
      observed.push(error);
      expect(leaks(error)).toEqual([]);
    }
  });

  it("transport errors of every kind: 401, timeout, reset, refused, HTML, JSON error, 200 {error}", async () => {
    const broken = [
      await fake({ kind: "hang" }),
      await fake({ kind: "reset" }),
      await fake({ kind: "status", status: 200, body: "<html>not json</html>" }),
      await fake({
        kind: "status",
        status: 500,
        body: '{"error":"ERR internal"}',
        type: "application/json",
      }),
      await fake({
        kind: "json",
        reply: () => ({ error: "WRONGPASS invalid or missing auth token" }),
      }),
    ];
    const port = await closedPort();
    const inputs: NodeInput[] = [
      ...dev.cluster.nodes.map((n) => ({ url: n.url, token: secret() })), // wrong tokens: 401
      ...broken.map((f) => ({ url: f.url, token: secret() })),
      { url: `http://127.0.0.1:${port}`, token: secret() },
      // user-supplied clients keep their own (default) retry and pipelining settings
      new UpstashRedis({
        url: `${broken[3]?.url}/user`,
        token: secret(),
        retry: { retries: 0, backoff: () => 0 },
      }),
      new UpstashRedis({
        url: `${broken[2]?.url}/user`,
        token: secret(),
        enableAutoPipelining: true,
      }),
    ];
    for (const input of inputs) {
      if ("token" in input && typeof input.token === "string") secrets.add(input.token);
    }
    for (const [i, input] of inputs.entries()) {
      const locks = createLocks({ nodes: [input], prefix: prefix(), requestTimeout: 300, onEvent });
      const error = await locks.acquire(`k${i}`).catch((e: unknown) => e);
      expect(isQuorumError(error), String(error)).toBe(true);
      observed.push(error, await locks.inspect(`k${i}`), await locks.forceRelease(`k${i}`));
    }
    const fromFakes = broken.flatMap(tokensSeenBy);
    expect(fromFakes.length).toBeGreaterThan(0);
    expect(leaks([observed, events], fromFakes)).toEqual([]);
  });

  it("busy, lost, expired, unknown, unavailable, invalid and budget paths", async () => {
    const { cluster } = dev;
    const nodes = cluster.nodes;
    const p = prefix();
    const locks = createLocks({ nodes, prefix: p, lease: 2_000, requestTimeout: 1_000, onEvent });
    const held: string[] = [];
    // busy
    const holder = await locks.acquire("busy");
    held.push(holder.token);
    // A second client: waiters of the holder's own manager queue locally and send nothing.
    const other = createLocks({ nodes, prefix: p, lease: 2_000, requestTimeout: 1_000, onEvent });
    const busy = await other.acquire("busy", { wait: 120 }).catch((e: unknown) => e);
    expect(isLockBusyError(busy)).toBe(true);
    observed.push(busy, await other.tryAcquire("busy"), await locks.inspect("busy"));
    observed.push(await holder.release());
    // lost: taken away on the nodes, then extended
    const lost = await locks.acquire("lost");
    held.push(lost.token);
    observed.push(await locks.forceRelease("lost"));
    const lostError = await lost.extend().catch((e: unknown) => e);
    expect(isLockLostError(lostError)).toBe(true);
    expect(lost.signal.aborted).toBe(true);
    observed.push(lostError, lost.signal.reason, await lost.release());
    // unavailable extension and unknown release: two of three nodes answer 503
    const flaky = await locks.acquire("flaky");
    held.push(flaky.token);
    await settle(200); // late answers of earlier rounds must not consume the faults below
    for (const c of cluster.controls.slice(1)) c.inject({ kind: "status", status: 503, count: 2 });
    const unavailable = await flaky.extend().catch((e: unknown) => e);
    expect(isQuorumError(unavailable)).toBe(true);
    const unknown = await flaky.release();
    expect(unknown.status).toBe("unknown");
    observed.push(unavailable, unknown);
    for (const c of cluster.controls) c.clearFaults();
    await locks.forceRelease("flaky");
    // expired: the validity runs out (the signal aborts), then release
    const short = createLocks({ nodes, prefix: p, lease: 300, onEvent });
    const expiring = await short.acquire("expiring");
    held.push(expiring.token);
    await new Promise((r) => setTimeout(r, 450));
    expect(expiring.signal.aborted).toBe(true);
    observed.push(expiring.signal.reason, await expiring.release());
    // invalid: every node answers, but slower than the lease allows (validity below minValidity)
    const slow = createLocks({ nodes, prefix: p, lease: 300, requestTimeout: 2_000, onEvent });
    for (const c of cluster.controls) c.inject({ kind: "latency", ms: 295 });
    const invalid = await slow.acquire("slow").catch((e: unknown) => e);
    for (const c of cluster.controls) c.clearFaults();
    expect(isQuorumError(invalid), String(invalid)).toBe(true);
    observed.push(invalid);
    // fence raise failure: the acquire round passes, the raise round fails on two nodes
    const fenced = createLocks({ nodes, prefix: p, fencing: true, onEvent });
    await (await fenced.acquire("warm")).release();
    await settle(200);
    for (const c of cluster.controls.slice(1)) {
      c.inject({ kind: "latency", ms: 0, count: 1 });
      c.inject({ kind: "status", status: 503, count: 1 });
    }
    const raise = await fenced.acquire("raise").catch((e: unknown) => e);
    for (const c of cluster.controls) c.clearFaults();
    expect(isQuorumError(raise), String(raise)).toBe(true);
    observed.push(raise);
    // budget exhausted
    const exhausted = await locks
      .acquire("budget", { budget: budget.within(0) })
      .catch((e: unknown) => e);
    expect(isBudgetExhaustedError(exhausted)).toBe(true);
    observed.push(exhausted);
    // using(): auto-extension and the callback's own error
    const own = new Error("handler failed");
    const usingError = await locks
      .using("using", async (lock) => {
        held.push(lock.token);
        observed.push(await lock.extend());
        throw own;
      })
      .catch((e: unknown) => e);
    expect(usingError).toBe(own);
    await settle(100);
    const types = new Set(
      events.map(
        (e) => `${e.type}:${"result" in e ? e.result : "reason" in e ? e.reason : e.index}`,
      ),
    );
    for (const expected of [
      "acquire:granted",
      "acquire:busy",
      "acquire:unavailable",
      "acquire:invalid",
      "extend:extended",
      "extend:lost",
      "extend:unavailable",
      "release:released",
      "release:expired",
      "release:unknown",
      "lost:lost",
      "lost:validity",
    ]) {
      expect(types, [...types].join(", ")).toContain(expected);
    }
    expect(held.every((t) => wireTokens.has(t))).toBe(true);
    expect(leaks([observed, events], held)).toEqual([]);
  });

  it("nothing printed to the console contains a token, and nothing crashed", async () => {
    await settle(100);
    expect(wireTokens.size).toBeGreaterThan(10);
    const output = consoleSpy.output();
    expect([...secrets, ...wireTokens].filter((s) => output.includes(s))).toEqual([]);
    expect(leaks([observed, events])).toEqual([]);
    // no lock token of any round, nor a node token, in any shape: 32 hex digits
    const everything = `${allStrings([observed, events]).join("\n")}\n${stringifyAll([observed, events])}`;
    expect(everything.match(/(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])/g) ?? []).toEqual([]);
    expect(watch.problems).toEqual([]);
  });

  // Known bug (reported to the lead): the "reply" classification copies up to 200 characters of an
  // unparsable body into the error message, so an upstream that echoes the request (a debugging
  // proxy, some gateways' error pages) puts the REST token into the TransportError.
  it("an upstream that echoes the request (headers and body) does not leak the token", async () => {
    const echo = await fake({ kind: "echo" });
    const token = secret();
    secrets.add(token);
    const locks = createLocks({ nodes: [{ url: echo.url, token }], prefix: prefix() });
    const error = await locks.acquire("k").catch((e: unknown) => e);
    expect(isQuorumError(error)).toBe(true);
    expect(leaks(error, tokensSeenBy(echo))).toEqual([]);
  });
});

describe("dev endpoint authentication", () => {
  const ROUTES: [method: string, path: string, body?: string][] = [
    ["POST", "/", '["SET","auth-probe","x"]'],
    ["PUT", "/", '["SET","auth-probe","x"]'],
    ["POST", "/pipeline", '[["SET","auth-probe","x"]]'],
    ["POST", "/multi-exec", '[["SET","auth-probe","x"]]'],
    ["GET", "/"],
    ["GET", "/__edgelock/stats"],
    ["DELETE", "/__edgelock/stats"],
    ["GET", "/__edgelock/faults"],
    ["POST", "/__edgelock/faults", '{"kind":"hang"}'],
    ["DELETE", "/__edgelock/faults"],
    ["POST", "/__edgelock/pause"],
    ["POST", "/__edgelock/resume"],
    ["POST", "/__edgelock/kill"],
    ["POST", "/__edgelock/restart", '{"delayMs":0}'],
    ["POST", "/__edgelock/unknown"],
    ["GET", "/no/such/route"],
  ];

  it("binds to loopback by default", async () => {
    for (const node of dev.cluster.nodes) expect(new URL(node.url).hostname).toBe("127.0.0.1");
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === "IPv4" && !i.internal)?.address;
    if (external !== undefined) {
      const port = new URL(dev.cluster.nodes[0]?.url ?? "").port;
      const reached = await fetch(`http://${external}:${port}/`, {
        method: "POST",
        signal: AbortSignal.timeout(2_000),
      }).then(
        () => true,
        () => false,
      );
      expect(reached).toBe(false);
    }
  });

  it("compares tokens without throwing on any length (both sides hashed, constant time)", () => {
    const token = dev.cluster.nodes[0]?.token ?? "";
    const check = new TokenCheck(token);
    expect(check.accepts(token)).toBe(true);
    for (const wrong of [
      undefined,
      "",
      token.slice(0, -1),
      `${token}0`,
      token.toUpperCase(),
      token.replace(/.$/, (c) => (c === "0" ? "1" : "0")),
      "x".repeat(10_000),
    ]) {
      expect(check.accepts(wrong)).toBe(false);
    }
  });

  it.each(ROUTES)(
    "%s %s rejects a missing or wrong token with 401 and does nothing",
    async (method, path, body) => {
      const node = dev.cluster.nodes[0] as { url: string; token: string };
      const wrong = secret();
      const attempts: [string, Record<string, string>][] = [
        ["", {}],
        ["", { authorization: `Bearer ${wrong}` }],
        ["", { authorization: "Bearer " }],
        ["", { authorization: `Basic ${Buffer.from(`default:${node.token}`).toString("base64")}` }],
        ["", { authorization: `Bearer ${node.token.slice(0, -1)}` }],
        ["", { authorization: `Bearer ${node.token.toUpperCase()}` }],
        ["", { authorization: `Token ${node.token}` }],
        [`?_token=${wrong}`, {}],
        [`?_token=${node.token.slice(0, 16)}`, {}],
      ];
      for (const [query, headers] of attempts) {
        const res = await fetch(`${node.url}${path}${query}`, {
          method,
          headers: { "content-type": "application/json", ...headers },
          ...(body === undefined ? {} : { body }),
        });
        const text = await res.text();
        expect(res.status, `${method} ${path} ${JSON.stringify(headers)} ${query}`).toBe(401);
        expect(JSON.parse(text)).toEqual({ error: "Unauthorized" });
        expect(text).not.toContain(node.token);
        expect(text).not.toContain(wrong);
      }
      // nothing happened: no key, no fault, node neither paused nor killed
      expect(await dev.direct(0).get("auth-probe")).toBeNull();
      const faults = await fetch(`${node.url}/__edgelock/faults`, {
        headers: { authorization: `Bearer ${node.token}` },
      });
      expect(await faults.json()).toEqual({ result: [] });
      const client = new UpstashRedis({ url: node.url, token: node.token });
      expect(await client.ping()).toBe("PONG");
    },
  );

  it("the right token works as Bearer and as ?_token", async () => {
    const node = dev.cluster.nodes[0] as { url: string; token: string };
    const bearer = await fetch(`${node.url}/__edgelock/stats`, {
      headers: { authorization: `Bearer ${node.token}` },
    });
    expect(bearer.status).toBe(200);
    const query = await fetch(`${node.url}/?_token=${node.token}`, {
      method: "POST",
      body: '["PING"]',
    });
    expect(await query.json()).toEqual({ result: "PONG" });
  });
});
