/**
 * Node requests per request of a waiting burst inside workerd (docs/SAFETY.md §6 "The queue":
 * at most two stalls without news). Nine requests at once from one isolate (one `Locks`) through
 * `limit({ permits: 3 })` and through `lock()` on one key, both with `wait: 10_000`, handlers of
 * 600 ms, on the free plan's 50 subrequests: every request runs (200) and none sends more than 50.
 * Before the bound, a waiter counted on some nodes while live holders kept the others looked every
 * `patience` (20 ms here): one in nine `limit()` requests sent 56–68 and answered 429 under load.
 * Every node request is counted where it leaves (a wrapper of `fetch`, told its request by an
 * `AsyncLocalStorage`) and named from its body: the script, and for a semaphore which step of the
 * call sent it; the distribution is printed. Set TRACE to print the requests of every request
 * that sent more than 12.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Hono, type MiddlewareHandler } from "hono";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { budget, type Locks } from "../../src";
import { limit, lock } from "../../src/adapters/hono";
import { SCRIPTS, SEMAPHORE_SCRIPTS } from "../../src/scripts";
import { call, healAll, sleep, testLocks } from "./support/cluster";

const P = 3;
const BURST = 9;
const FREE = 50;
const N = 3;
/** Print the node requests of every request that sent more than 12, in order, with their ms. */
const TRACE = false;

/** One node request: what sent it, and the library's charged count before it. */
interface Sent {
  readonly kind: string;
  readonly charged: boolean;
  /** ms since the request's first node request. */
  readonly at: number;
}

const byRequest = new AsyncLocalStorage<number>();
const log = new Map<number, Sent[]>();
const names = new Map<string, string>();
for (const s of [...SCRIPTS, ...SEMAPHORE_SCRIPTS]) names.set(s.sha1, s.name);
/** Per request: the token of its first look (a semaphore's DISCARD_SLOTS of it ends that look). */
const firstToken = new Map<number, string>();
/** Per request: when it was called (`performance.now()`). */
const began = new Map<number, number>();

function kindOf(request: number, body: unknown[]): string {
  const cmd = String(body[0]).toLowerCase();
  if (cmd === "subscribe") return "stream";
  if (cmd !== "evalsha" && cmd !== "eval") return cmd;
  const script = String(body[1]);
  const name =
    cmd === "evalsha"
      ? (names.get(script) ?? "?")
      : ([...SCRIPTS, ...SEMAPHORE_SCRIPTS].find((s) => s.lua === script)?.name ?? "?");
  const args = body.slice(3 + Number(body[2])).map(String);
  if (name === "semaphore-acquire") {
    if (args.length <= 8) {
      if (!firstToken.has(request)) firstToken.set(request, args[0] ?? "");
      return "sem first look";
    }
    if (args[8] === "1") return "sem registration look";
    return args[3] === "1" ? "sem split look" : "sem refresh look";
  }
  if (name === "semaphore-pass") return args[2] === "" ? "sem pass (all)" : "sem pass (keep)";
  if (name === "semaphore-discard") {
    const slots = (args[1] ?? "").split(",").length;
    if (slots < P) return "sem trim";
    return args[0] === firstToken.get(request) ? "sem first look end" : "sem give-up discard";
  }
  if (name === "semaphore-release") return "sem release";
  return `lock ${name}`;
}

/** An app whose handler holds `holdMs` behind `limit()` or `lock()`, counting the overlap. */
function burstApp(locks: Locks, mode: "limit" | "lock", holdMs: number, subrequests: number) {
  const seen = { active: 0, most: 0, ran: 0 };
  const per = () => budget.workersFetch({ subrequests });
  const gate: MiddlewareHandler =
    mode === "limit"
      ? limit({ locks, key: "api", permits: P, wait: 10_000, budget: per })
      : lock({ locks, key: () => "one", wait: 10_000, budget: per });
  const app = new Hono();
  app.post("/run", gate, async (c) => {
    seen.active++;
    seen.ran++;
    seen.most = Math.max(seen.most, seen.active);
    await sleep(holdMs);
    seen.active--;
    return c.text("ok");
  });
  return { app, seen };
}

let next = 0;
/** Every response's status, for the runs on the free plan's budget. */
const statuses: number[] = [];

/** Run `bursts` bursts of BURST requests; returns each request's log. */
async function measure(
  mode: "limit" | "lock",
  { holdMs = 150, bursts = 1, subrequests = 1_000 } = {},
): Promise<Sent[][]> {
  const all: Sent[][] = [];
  for (let b = 0; b < bursts; b++) {
    const { locks } = testLocks({ lease: 5_000, requestTimeout: 2_000 });
    const { app, seen } = burstApp(locks, mode, holdMs, subrequests);
    const ids = Array.from({ length: BURST }, () => next++);
    for (const id of ids) {
      log.set(id, []);
      began.set(id, performance.now());
    }
    const calls = ids.map((id) => byRequest.run(id, () => call(app, "/run")));
    const responses = await Promise.all(calls.map((c) => c.response));
    await Promise.all(calls.map((c) => c.settled));
    statuses.push(...responses.map((r) => r.status));
    if (subrequests >= 1_000)
      expect(responses.map((r) => r.status)).toEqual(Array(BURST).fill(200));
    expect(seen.most).toBeLessThanOrEqual(mode === "limit" ? P : 1);
    for (const id of ids) all.push(log.get(id) ?? []);
  }
  return all;
}

/** Subrequests of a request; and what its budget must still have had at its last look or pass. */
function summary(label: string, requests: Sent[][]): void {
  const acquiring = (k: string) => /look|pass|lock acquire/.test(k);
  const rows = requests.map((sent) => {
    let lastNeed = 0;
    let charged = 0;
    for (const s of sent) {
      // The library sends a look or pass only with 2N left (the round and the release).
      if (acquiring(s.kind)) lastNeed = charged + 2 * N;
      if (s.charged) charged++;
    }
    return { total: sent.length, charged, lastNeed, sent };
  });
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const stat = (xs: number[]) => {
    const s = sorted(xs);
    return `min ${s[0]} median ${s[Math.floor(s.length / 2)]} max ${s[s.length - 1]}`;
  };
  const worst = rows.reduce((a, b) => (b.total > a.total ? b : a));
  const breakdown = new Map<string, number>();
  for (const s of worst.sent) breakdown.set(s.kind, (breakdown.get(s.kind) ?? 0) + 1);
  const kinds = new Map<string, number[]>();
  for (const r of rows) {
    const here = new Map<string, number>();
    for (const s of r.sent) here.set(s.kind, (here.get(s.kind) ?? 0) + 1);
    for (const k of new Set([...kinds.keys(), ...here.keys()])) {
      if (!kinds.has(k)) kinds.set(k, Array(rows.indexOf(r)).fill(0));
      kinds.get(k)?.push(here.get(k) ?? 0);
    }
  }
  const over = rows.filter((r) => r.lastNeed > FREE || r.total > FREE).length;
  console.log(
    [
      `${label}: ${rows.length} requests; node requests per request ${stat(rows.map((r) => r.total))}`,
      `  charged to the budget ${stat(rows.map((r) => r.charged))}; needed left at the last look/pass ${stat(rows.map((r) => r.lastNeed))}`,
      `  over ${FREE} (give-up or a refused fetch on the free plan): ${over}`,
      `  per kind (min/median/max): ${[...kinds]
        .map(
          ([k, v]) =>
            `${k} ${stat(v)
              .replace(/min |median |max /g, "")
              .replace(/ /g, "/")}`,
        )
        .join("; ")}`,
      `  worst (${worst.total}): ${[...breakdown].map(([k, v]) => `${k} ${v}`).join(", ")}`,
      ...(TRACE
        ? rows
            .filter((r) => r.total > 12)
            .map(
              (r) =>
                `  trace: ${r.sent.map((s) => `${s.at}:${s.kind.replace(/^(sem|lock) /, "")}`).join(" ")}`,
            )
        : []),
    ].join("\n"),
  );
}

describe("subrequests per request of a waiting burst", () => {
  const original = globalThis.fetch;
  beforeAll(() => {
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = byRequest.getStore();
      if (request !== undefined) {
        let body: unknown[] = [];
        try {
          body = JSON.parse(String(init?.body ?? "[]"));
        } catch {}
        const url = String(input instanceof Request ? input.url : input);
        const kind = url.includes("/subscribe") ? "stream" : kindOf(request, body);
        // What the library charges to the request's budget: all but the trim (`budget: undefined`).
        const sent = log.get(request);
        const at = Math.round(performance.now() - (began.get(request) ?? 0));
        sent?.push({ kind, charged: kind !== "sem trim", at });
      }
      return original(input, init);
    }) as typeof fetch;
  });
  afterAll(() => {
    globalThis.fetch = original;
  });
  afterEach(healAll);

  it("on the free plan's 50 subrequests a waiting burst of nine all runs, each within 50: limit() and lock()", async () => {
    for (const [mode, bursts] of [
      ["limit", 4],
      ["lock", 1],
    ] as const) {
      statuses.length = 0;
      const sent = await measure(mode, { holdMs: 600, bursts, subrequests: FREE });
      summary(`${mode}, hold 600 ms, ${FREE}`, sent);
      expect(statuses, mode).toEqual(Array(bursts * BURST).fill(200));
      expect(Math.max(...sent.map((s) => s.length)), mode).toBeLessThanOrEqual(FREE);
    }
  }, 120_000);
});
