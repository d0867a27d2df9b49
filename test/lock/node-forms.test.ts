/**
 * Both forms of a `nodes` entry against a real redis-server through the dev cluster's
 * Upstash-compatible endpoint: `{ url, token }` (edgelock builds the client) and a user's
 * `@upstash/redis` `Redis` with its default settings (reply deserialization and auto-pipelining
 * on). Every script's reply must come through both unchanged, records that look like JSON included,
 * and an Idempotency-Key retry must be replayed with either form.
 */
import { Redis as NodeRedis } from "@upstash/redis";
import { Redis as CloudflareRedis } from "@upstash/redis/cloudflare";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { idempotency } from "../../src/adapters/hono";
import { createLocks } from "../../src/index";
import { createNode, type RestNode } from "../../src/node";
import {
  ACQUIRE,
  COMPLETE,
  DISCARD,
  EXTEND,
  evalScript,
  FENCE_RAISE,
  FORCE_RELEASE,
  HANDOVER,
  INSPECT,
  LEAVE,
  PASS,
  RECORD,
  RELEASE,
  RESUME,
  SCRIPTS,
  type Script,
} from "../../src/scripts";
import { useDevCluster } from "../support/dev-cluster";
import { resetCluster, uniquePrefix } from "./helpers";

const dev = useDevCluster({ nodes: 3 });

afterEach(() => resetCluster(dev.cluster));

/** Records whose text `JSON.parse` accepts, and a few it does not. */
const RECORDS = [
  '{"a":1}',
  "123",
  '"x"',
  "null",
  "true",
  "false",
  "[1,2]",
  "1e3",
  "-0",
  "OK",
  "plain text",
  '{"status":201,"headers":[["content-type","application/json"]],"body":"eyJvayI6dHJ1ZX0="}',
];

/** The node forms under test, for node `i` of the cluster. */
function forms(i: number): [string, () => RestNode][] {
  const { url, token } = dev.cluster.nodes[i] as { url: string; token: string };
  return [
    ["{ url, token }", () => createNode({ url, token }, i).node],
    [
      "new Redis({ url, token }) (Node entry)",
      () => createNode(new NodeRedis({ url, token }), i).node,
    ],
    [
      "Redis.fromEnv() (Node entry)",
      () => {
        const saved = [process.env.UPSTASH_REDIS_REST_URL, process.env.UPSTASH_REDIS_REST_TOKEN];
        process.env.UPSTASH_REDIS_REST_URL = url;
        process.env.UPSTASH_REDIS_REST_TOKEN = token;
        try {
          return createNode(NodeRedis.fromEnv(), i).node;
        } finally {
          restore("UPSTASH_REDIS_REST_URL", saved[0]);
          restore("UPSTASH_REDIS_REST_TOKEN", saved[1]);
        }
      },
    ],
    [
      "new Redis({ url, token }) (Cloudflare entry)",
      () => createNode(new CloudflareRedis({ url, token }), i).node,
    ],
  ];
}

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/**
 * Every script, in an order that gives each of its reply shapes, on keys under `prefix`: the
 * parsed replies, with positive PTTLs checked against their TTL and replaced by `"live"` (the
 * milliseconds differ between two runs).
 */
async function everyScript(node: RestNode, prefix: string) {
  const replies: [string, unknown][] = [];
  const used = new Set<string>();
  const run = async <T>(script: Script<T>, keys: string[], args: string[]) => {
    used.add(script.name);
    const reply = await evalScript(node, script, keys, args, { timeoutMs: 2_000 });
    replies.push([script.name, livePttl(reply)]);
    return reply;
  };
  const lock = (name: string) => [
    `${prefix}${name}`,
    `${prefix}${name}:fence`,
    `${prefix}${name}:room`,
  ];
  const a = lock("a");
  await run(ACQUIRE, a, ["t1", "10000", "1"]);
  await run(ACQUIRE, a, ["t2", "10000", "1"]);
  await run(EXTEND, a, ["t1", "20000"]);
  await run(EXTEND, a, ["t2", "20000"]);
  await run(EXTEND, lock("none"), ["t1", "20000"]);
  await run(FENCE_RAISE, a, ["5", "t1"]);
  await run(FENCE_RAISE, a, ["6", "t2"]);
  await run(INSPECT, a, []);
  await run(RESUME, a, ["t1", "t3", "10000", "1"]);
  await run(RESUME, a, ["t1", "t9", "10000", "1"]);
  await run(HANDOVER, a, ["t3", "t4", "10000", "1", ""]);
  await run(RELEASE, a, ["t3"]);
  await run(RELEASE, a, ["t4"]);
  await run(RELEASE, a, ["t4"]);
  // A waiter in the wait queue, passing (it holds nothing), then leaving it.
  const b = lock("b");
  await run(ACQUIRE, b, ["t5", "10000", "0"]);
  const registration = (look: string) => [
    String(Date.now()),
    look,
    "abc",
    "60000",
    "1000",
    "60000",
    "0",
  ];
  await run(ACQUIRE, b, ["t6", "10000", "0", ...registration("1")]);
  await run(PASS, [...b, `${prefix}b:void:t6`], ["t6", ...registration("2")]);
  await run(LEAVE, b, ["t6"]);
  await run(LEAVE, b, ["t6"]);
  await run(INSPECT, b, []);
  await run(FORCE_RELEASE, b, []);
  await run(FORCE_RELEASE, b, []);
  await run(INSPECT, b, []);
  // Done markers with records, and the RECORD lookups of each state.
  await run(RECORD, lock("absent"), []);
  await run(ACQUIRE, lock("held"), ["t7", "10000", "0"]);
  await run(RECORD, lock("held"), []);
  await run(COMPLETE, lock("held"), ["t8", "60000"]);
  for (const [i, record] of RECORDS.entries()) {
    const r = lock(`r${i}`);
    await run(COMPLETE, r, [`c${i}`, "60000", record]);
    await run(COMPLETE, r, [`c${i}`, "60000", record]);
    await run(RECORD, r, []);
    await run(INSPECT, r, []);
  }
  const bare = lock("bare");
  await run(COMPLETE, bare, ["c", "60000"]);
  await run(RECORD, bare, []);
  await run(ACQUIRE, bare, ["t10", "10000", "1"]);
  // A failed round's cleanup, then a late request of that round (refused by the tombstone).
  const c = [...lock("c"), `${prefix}c:void:t11`];
  await run(ACQUIRE, c, ["t11", "10000", "0"]);
  await run(DISCARD, c, ["t11", "10000"]);
  await run(DISCARD, c, ["t11", "10000"]);
  await run(ACQUIRE, c, ["t11", "10000", "0"]);
  expect([...used].sort()).toEqual(SCRIPTS.map((s) => s.name).sort());
  return replies;
}

/** `reply` with every positive `pttl` (a field, or the second integer of an ACQUIRE pair) as "live". */
function livePttl(reply: unknown): unknown {
  if (typeof reply !== "object" || reply === null) return reply;
  const entries = Object.entries(reply).map(([key, value]) => {
    if (key === "pttl" && typeof value === "number" && value > 0) {
      expect(value).toBeLessThanOrEqual(60_000);
      return [key, "live"];
    }
    return [key, livePttl(value)];
  });
  return Object.fromEntries(entries);
}

describe("every script's reply comes through both node forms unchanged", () => {
  it("gives the same replies through every form, records that look like JSON included", async () => {
    const [reference, ...others] = forms(0);
    if (reference === undefined) throw new Error("no forms");
    const expected = await everyScript(reference[1](), uniquePrefix("forms-ref"));
    // The reference itself: each record is read back as written.
    const records = expected.filter(([name]) => name === "record").map(([, reply]) => reply);
    expect(records).toEqual([
      { kind: "absent" },
      { kind: "held", pttl: "live" },
      ...RECORDS.map((record) => ({ kind: "done", pttl: "live", record })),
      { kind: "done", pttl: "live", record: "" },
    ]);
    for (const [name, make] of others) {
      const got = await everyScript(make(), uniquePrefix("forms"));
      expect({ name, replies: got }).toEqual({ name, replies: expected });
    }
  });

  it("a cold node (script cache flushed) gets the source once through a Redis instance too", async () => {
    const node = createNode(
      new NodeRedis(dev.cluster.nodes[1] as { url: string; token: string }),
      1,
    ).node;
    const keys = [`${uniquePrefix("cold")}k`, "f", "r"];
    await dev.direct(1).script("FLUSH");
    node.knownScripts.add(RELEASE.sha1);
    expect(await evalScript(node, RELEASE, keys, ["t"], { timeoutMs: 2_000 })).toBe(0);
    expect(node.knownScripts.has(RELEASE.sha1)).toBe(true);
  });
});

describe("Idempotency-Key replay with Redis instances as nodes", () => {
  it("a retry with the same key is replayed from the record, and the handler ran once", async () => {
    const nodes = dev.cluster.nodes.map(({ url, token }) => new NodeRedis({ url, token }));
    const locks = createLocks({ nodes, prefix: uniquePrefix("idem-forms"), requestTimeout: 1_000 });
    let runs = 0;
    const app = new Hono();
    app.use("/charge", idempotency({ locks }));
    app.post("/charge", (c) => {
      runs += 1;
      return c.json({ charge: runs }, 201);
    });
    const post = () =>
      app.request("/charge", {
        method: "POST",
        body: "amount=5",
        headers: { "Idempotency-Key": `"k-forms"` },
      });
    const first = await post();
    expect([first.status, await first.text()]).toEqual([201, '{"charge":1}']);
    const again = await post();
    expect([again.status, again.headers.get("idempotency-replayed"), await again.text()]).toEqual([
      201,
      "true",
      '{"charge":1}',
    ]);
    expect(runs).toBe(1);
  });
});
