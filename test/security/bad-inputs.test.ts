/**
 * Bad inputs, table-driven: invalid options, keys and per-call options, misconfigured nodes and
 * malformed upstream replies. Each must produce the documented typed error naming the option or
 * the node (index + host), crash nothing (no unhandled rejection or uncaught exception), and leave
 * no lock held on the real nodes. Options that are not an object, or name an unknown option, are
 * fed to every function of the public API by `api-options.test.ts`; here, bad values.
 */
import { Redis } from "@upstash/redis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type ConfigurationError,
  createLocks,
  isConfigurationError,
  isQuorumError,
  isTransportError,
  type LocksOptions,
  type NodeInput,
  type QuorumError,
  type TransportErrorKind,
} from "../../src/index";
import { MAX_LEASE } from "../../src/lock/options";
import { quietThenReset } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";
import {
  type Behaviour,
  closedPort,
  type FakeUpstream,
  startFakeUpstream,
} from "./support/fake-upstream";
import { CrashWatch, settle } from "./support/inspect";
import { OPTION_CASES } from "./support/option-cases";

const dev = useDevCluster({ nodes: 3 });
const watch = new CrashWatch();
beforeAll(() => watch.install());
afterAll(() => watch.uninstall());
afterEach(async () => {
  await settle(50);
  expect(watch.problems).toEqual([]);
});

const prefix = () => `bad:${crypto.randomUUID()}:`;

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

function expectConfigError(error: unknown, option: string): void {
  expect(isConfigurationError(error), String(error)).toBe(true);
  expect((error as ConfigurationError).option).toBe(option);
  expect((error as ConfigurationError).message).toContain(`\`${option}\``);
}

/** Lock keys (not fence counters) left on the real nodes under `p`. */
async function heldKeys(p: string): Promise<string[]> {
  const found: string[] = [];
  for (let i = 0; i < 3; i++) {
    const keys = await dev.direct(i).keys(`${p}*`);
    // Tombstones of failed rounds (`:void:<token>`) are no lock keys: they expire on their own;
    // nor is a key's queue (`:wait`, a hash naming the last holder placed: it lives the lease).
    const locks = keys.filter(
      (k) => !k.endsWith(":fence") && !k.endsWith(":wait") && !k.includes(":void:"),
    );
    found.push(...locks.map((k) => `node${i}:${k}`));
  }
  return found;
}

/**
 * No lock key left on the real nodes. A failed acquire releases a node that answered late (or
 * failed) in the background, and `release()` resolves once a majority answered, so give the last
 * request a moment to land before asserting.
 */
async function expectNoneHeld(p: string): Promise<void> {
  const until = performance.now() + 3_000;
  let left = await heldKeys(p);
  while (left.length > 0 && performance.now() < until) {
    await settle(25);
    left = await heldKeys(p);
  }
  expect(left).toEqual([]);
}

describe("invalid options → ConfigurationError naming the option", () => {
  it.each(OPTION_CASES)("$name → `$option`", ({ make, option }) => {
    const nodes = dev.cluster.nodes;
    expectConfigError(
      thrown(() => createLocks(make(nodes) as LocksOptions)),
      option,
    );
  });
});

const KEY_CASES: { name: string; key: unknown; fencing?: boolean }[] = [
  { name: "empty", key: "" },
  { name: "a number", key: 42 },
  { name: "undefined", key: undefined },
  { name: "an object", key: { toString: () => "k" } },
  { name: "longer than 1024 bytes", key: "é".repeat(600) },
  { name: "ending in :fence with fencing on", key: "invoice:fence", fencing: true },
];
const CALLS = ["acquire", "tryAcquire", "using", "inspect", "forceRelease"] as const;

describe("invalid keys → ConfigurationError `key`, no node called", () => {
  it.each(KEY_CASES)("key $name", async ({ key, fencing }) => {
    const locks = createLocks({
      nodes: dev.cluster.nodes,
      prefix: prefix(),
      fencing: fencing ?? false,
    });
    await quietThenReset(dev.cluster);
    for (const call of CALLS) {
      // inspect/forceRelease do not reserve the fence suffix: they may look at any key
      if (fencing && (call === "inspect" || call === "forceRelease")) continue;
      const run = locks[call] as (k: unknown, f?: unknown) => Promise<unknown>;
      const error = await run(key, async () => {}).catch((e: unknown) => e);
      expectConfigError(error, "key");
    }
    expect(dev.cluster.controls.map((c) => c.stats().requests)).toEqual([0, 0, 0]);
  });
});

const CALL_CASES: { name: string; option: string; opts: unknown }[] = [
  { name: "lease 0", option: "lease", opts: { lease: 0 } },
  { name: "lease a string", option: "lease", opts: { lease: "5s" } },
  { name: "wait negative", option: "wait", opts: { wait: -5 } },
  { name: "signal not an AbortSignal", option: "signal", opts: { signal: {} } },
  { name: "budget not a Budget", option: "budget", opts: { budget: { remaining: 5 } } },
  { name: "autoExtend a string", option: "autoExtend", opts: { autoExtend: "yes" } },
];

describe("invalid per-call options → ConfigurationError naming the option", () => {
  it.each(CALL_CASES)("$name → `$option`", async ({ opts, option }) => {
    const p = prefix();
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix: p });
    const acquire = locks.acquire as (k: string, o: unknown) => Promise<unknown>;
    expectConfigError(await acquire("k", opts).catch((e: unknown) => e), option);
    await expectNoneHeld(p);
  });

  it.each([0, -1, 2.5, Number.NaN, MAX_LEASE + 1])(
    "lock.extend(%s) → `lease`, lock still held",
    async (lease) => {
      const p = prefix();
      const locks = createLocks({ nodes: dev.cluster.nodes, prefix: p });
      const lock = await locks.acquire("k");
      expectConfigError(await lock.extend(lease).catch((e: unknown) => e), "lease");
      expect(lock.signal.aborted).toBe(false);
      expect((await lock.release()).status).toBe("released");
      await expectNoneHeld(p);
    },
  );
});

describe("a callback that is not a function", () => {
  it("using with a callback that is not a function → ConfigurationError `fn`, no node called", async () => {
    const p = prefix();
    const locks = createLocks({ nodes: dev.cluster.nodes, prefix: p });
    await quietThenReset(dev.cluster);
    const using = locks.using as (k: string, fn: unknown) => Promise<unknown>;
    expectConfigError(await using("k", 5).catch((e: unknown) => e), "fn");
    expect(dev.cluster.controls.map((c) => c.stats().requests)).toEqual([0, 0, 0]);
    await expectNoneHeld(p);
  });
});

interface NodeCase {
  readonly name: string;
  /** Kinds of TransportError accepted for the bad nodes. */
  readonly kinds: readonly TransportErrorKind[];
  /** Builds the two bad nodes (indexes 1 and 2). */
  readonly bad: () => Promise<{
    nodes: [NodeInput, NodeInput];
    hosts: [string, string];
    close?: () => Promise<void>;
  }>;
}

function fakeCase(
  name: string,
  kinds: readonly TransportErrorKind[],
  behaviour: Behaviour,
): NodeCase {
  return {
    name,
    kinds,
    bad: async () => {
      const fake: FakeUpstream = await startFakeUpstream(behaviour);
      const host = new URL(fake.url).host;
      return {
        nodes: [
          { url: `${fake.url}/a`, token: "fake-token-a" },
          { url: `${fake.url}/b`, token: "fake-token-b" },
        ],
        hosts: [host, host],
        close: () => fake.close(),
      };
    },
  };
}

const html = "<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>";
const NODE_CASES: NodeCase[] = [
  {
    name: "wrong token (401)",
    kinds: ["auth"],
    bad: async () => {
      const [, n1, n2] = dev.cluster.nodes;
      return {
        nodes: [
          { url: n1?.url ?? "", token: "wrong-token-1" },
          { url: n2?.url ?? "", token: "wrong-token-2" },
        ],
        hosts: [new URL(n1?.url ?? "").host, new URL(n2?.url ?? "").host],
      };
    },
  },
  {
    name: "unreachable port",
    kinds: ["network"],
    bad: async () => {
      const port = await closedPort();
      const url = `http://127.0.0.1:${port}`;
      return {
        nodes: [
          { url, token: "t1" },
          { url: `${url}/other`, token: "t2" },
        ],
        hosts: [`127.0.0.1:${port}`, `127.0.0.1:${port}`],
      };
    },
  },
  fakeCase("a URL that answers an HTML page (200)", ["reply"], {
    kind: "status",
    status: 200,
    body: html,
  }),
  fakeCase("a URL that answers an HTML 404", ["reply"], {
    kind: "status",
    status: 404,
    body: html,
  }),
  fakeCase("non-JSON 200", ["reply"], {
    kind: "status",
    status: 200,
    body: "OK",
    type: "text/plain",
  }),
  fakeCase("truncated JSON", ["reply"], {
    kind: "status",
    status: 200,
    body: '{"result":[1,',
    type: "application/json",
  }),
  fakeCase("empty 503", ["reply"], { kind: "status", status: 503, body: "" }),
  fakeCase("500 with a JSON error", ["server"], {
    kind: "status",
    status: 500,
    body: '{"error":"ERR internal"}',
    type: "application/json",
  }),
  fakeCase("200 with {error}", ["server"], {
    kind: "json",
    reply: () => ({ error: "ERR something broke" }),
  }),
  fakeCase("200 with neither result nor error", ["reply"], { kind: "json", reply: () => ({}) }),
  fakeCase("result of the wrong type (string)", ["reply"], {
    kind: "json",
    reply: () => ({ result: "aGVsbG8=" }),
  }),
  fakeCase("result null", ["reply"], { kind: "json", reply: () => ({ result: null }) }),
  fakeCase("result an object", ["reply"], { kind: "json", reply: () => ({ result: { a: 1 } }) }),
  fakeCase("script answering an unexpected shape [7, 1]", ["reply"], {
    kind: "json",
    reply: () => ({ result: [7, 1] }),
  }),
  fakeCase("script answering a short array [1]", ["reply"], {
    kind: "json",
    reply: () => ({ result: [1] }),
  }),
  fakeCase("script answering floats [1, 0.5]", ["reply"], {
    kind: "json",
    reply: () => ({ result: [1, 0.5] }),
  }),
  fakeCase("a node that never answers", ["timeout"], { kind: "hang" }),
  fakeCase("a node that resets every connection", ["network"], { kind: "reset" }),
  {
    name: "200 {error} on a pipeline (user-supplied client with auto-pipelining)",
    kinds: ["reply", "server", "network"],
    bad: async () => {
      const fake = await startFakeUpstream({
        kind: "json",
        reply: () => ({ error: "ERR pipeline broke" }),
      });
      const host = new URL(fake.url).host;
      const client = (path: string) =>
        new Redis({
          url: `${fake.url}${path}`,
          token: "fake",
          enableAutoPipelining: true,
          retry: { retries: 0, backoff: () => 0 },
        });
      return {
        nodes: [client("/a"), client("/b")],
        hosts: [host, host],
        close: () => fake.close(),
      };
    },
  },
];

describe("misconfigured nodes and malformed replies → QuorumError; outcomes name the node", () => {
  it.each(NODE_CASES)("$name", async ({ bad, kinds }) => {
    const p = prefix();
    const { nodes, hosts, close } = await bad();
    try {
      const locks = createLocks({
        nodes: [dev.cluster.nodes[0] as NodeInput, ...nodes],
        prefix: p,
        requestTimeout: 500,
      });
      const error = (await locks.acquire("k").catch((e: unknown) => e)) as QuorumError;
      expect(isQuorumError(error), String(error)).toBe(true);
      expect(error.key).toBe("k");
      // the healthy node granted (or was still answering when the round was decided, or was
      // starved past the timeout on a loaded machine); it is released in every case
      expect(["ok", "pending", "timeout"]).toContain(error.outcomes[0]?.status);
      for (const index of [1, 2]) {
        const outcome = error.outcomes[index];
        expect(outcome?.index).toBe(index);
        expect(outcome?.host).toBe(hosts[index - 1]);
        expect(["error", "timeout"]).toContain(outcome?.status);
        const transport = outcome?.error;
        expect(isTransportError(transport), String(transport)).toBe(true);
        expect(transport?.node).toBe(index);
        expect(transport?.host).toBe(hosts[index - 1]);
        expect(kinds).toContain(transport?.kind);
        expect(transport?.message).toMatch(
          new RegExp(`^node ${index} \\(${hosts[index - 1]}\\): `),
        );
      }
      await expectNoneHeld(p);
      // inspect reports per node and does not throw for broken nodes
      const seen = await locks.inspect("k");
      expect(seen.nodes.map((o) => o.index)).toEqual([0, 1, 2]);
      expect(seen.nodes[0]?.status).toBe("absent");
      for (const o of seen.nodes.slice(1))
        if (o.error !== undefined) expect(o.error.node).toBe(o.index);
    } finally {
      await close?.();
    }
  });

  it("a majority healthy: the bad minority is reported and the lock still works", async () => {
    const p = prefix();
    const fake = await startFakeUpstream({ kind: "status", status: 200, body: html });
    try {
      const events: string[] = [];
      const locks = createLocks({
        nodes: [...dev.cluster.nodes.slice(0, 2), { url: fake.url, token: "t" }],
        prefix: p,
        onEvent: (e) =>
          events.push(`${e.type}:${"result" in e ? e.result : "reason" in e ? e.reason : e.index}`),
      });
      const lock = await locks.acquire("k");
      expect((await lock.release()).status).toBe("released");
      expect(events).toEqual(["acquire:granted", "release:released"]);
      await expectNoneHeld(p);
    } finally {
      await fake.close();
    }
  });
});
