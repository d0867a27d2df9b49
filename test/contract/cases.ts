/**
 * The adapter contract: each promise the adapters make, written once as a case, run against every
 * surface that makes it (`surfaces.ts`, one row of glue each). A case that does not apply to a
 * surface says why in its `notFor`. docs/SAFETY.md §6e names these cases by id.
 *
 * Runtime-neutral: `test/contract/contract.test.ts` runs the table in Node (Hono on Node, the
 * Lambda wrappers, `once()`), `test/workers/contract.test.ts` inside workerd (Hono with a real
 * `ExecutionContext`, Workers `dedupeScheduled`, `once()`).
 *
 * @module
 */
import { describe, expect, it, vi } from "vitest";
import { isConfigurationError, type Lock } from "../../src/index";
import { C13 } from "./capacity";
import type { ContractCluster, JobAnswer, Surface } from "./harness";

/** Where a surface's name starts: the table's `notFor` keys, every kind of surface. */
export const KINDS = [
  "hono lock()",
  "hono limit()",
  "hono idempotency()",
  "lambda withLock",
  "lambda withLimit",
  "lambda withIdempotency",
  "lambda dedupeScheduled",
  "workers dedupeScheduled",
  "once()",
] as const;

/** One of {@link KINDS}. */
export type Kind = (typeof KINDS)[number];

/** One promise. */
export interface Case {
  readonly id: string;
  readonly promise: string;
  /** Surfaces that do not make this promise, and why. */
  readonly notFor: Partial<Record<Kind, string>>;
  readonly run: (surface: Surface, cluster: ContractCluster) => Promise<void>;
}

const SLOW_NODE = 2;
/** Within the request timeout (2 s), far beyond a round's usual few ms. */
const SLOW_MS = 600;

const LOCKS_KEEP_NOTHING =
  "a lock or a limit keeps nothing: every request runs under its own lock or permit, nothing is replayed";
/** The lock and limit surfaces: each request runs under its own lock or permit. */
const KEEP_NOTHING: Partial<Record<Kind, string>> = {
  "hono lock()": LOCKS_KEEP_NOTHING,
  "hono limit()": LOCKS_KEEP_NOTHING,
  "lambda withLock": LOCKS_KEEP_NOTHING,
  "lambda withLimit": LOCKS_KEEP_NOTHING,
};
const NO_STATUS = "no HTTP answer: a job that returns is a success, one that throws a failure";
const NO_LOCK_LAYER =
  "nothing to wrap: a lock layer's busy or unavailable answer is an HTTP answer only an idempotency layer could keep";
const THROWS_INSTEAD =
  "answers no 503: a lock failure is thrown, and the runtime logs the error (its stack included) and fails the invocation";

/** Hold the slow node's next script request (the round that ends the lock) {@link SLOW_MS}. */
const slowNext = (cluster: ContractCluster) =>
  cluster.inject(SLOW_NODE, { kind: "latency", ms: SLOW_MS, count: 1 });

/**
 * The manager's prefix is not on the lock: the glue's prefix plus the key it holds (a permit's is
 * its slot's key, `keys[0]`; a lock's single key is its `key`).
 */
const fullKey = (prefix: string, lock: Lock) => `${prefix}${lock.keys[0] ?? lock.key}`;

/** Run `job` once on a fresh instance, returning the key it ran under. */
async function ranOnce(
  surface: Surface,
  cluster: ContractCluster,
  answer: (lock: Lock, key: string) => Promise<JobAnswer>,
) {
  const { locks, prefix } = cluster.locks();
  const instance = surface.build({ locks });
  let key = "";
  const invoked = await instance.invoke(async (lock) => {
    key = fullKey(prefix, lock);
    return answer(lock, key);
  });
  return { invoked, key, instance, locks };
}

/** Invoke a fresh instance with `first`, then again (a retry) with a 201. */
async function twice(surface: Surface, cluster: ContractCluster, first: JobAnswer) {
  const { invoked, instance } = await ranOnce(surface, cluster, async () => first);
  expect(invoked.ran).toBe(true);
  const second = await instance.invoke(async () => ({ status: 201 }));
  return { first: invoked, second };
}

export const CASES: readonly Case[] = [
  {
    id: "C1",
    promise: "the job runs while the lock (or claim) is held on every node",
    notFor: {},
    async run(surface, cluster) {
      let during: (string | null)[] = [];
      let token = "";
      const { invoked } = await ranOnce(surface, cluster, async (lock, key) => {
        token = lock.token;
        during = await cluster.read(key);
        return { status: 201 };
      });
      expect(invoked.ran).toBe(true);
      expect(during).toEqual([token, token, token]);
    },
  },
  {
    id: "C2",
    promise: "a body produced after the handler returned is produced under the lock",
    notFor: {
      "lambda withLock": "a Lambda result is whole when the handler returns: no body outlives it",
      "lambda withLimit": "a Lambda result is whole when the handler returns: no body outlives it",
      "lambda withIdempotency":
        "a Lambda result is whole when the handler returns: no body outlives it",
      "lambda dedupeScheduled": "no response body",
      "workers dedupeScheduled": "no response body",
      "once()": "no response body",
    },
    async run(surface, cluster) {
      let during: (string | null)[] = [];
      let token = "";
      const { invoked } = await ranOnce(surface, cluster, async (lock, key) => {
        token = lock.token;
        return {
          status: 200,
          stream: async () => {
            await new Promise((resolve) => setTimeout(resolve, 50));
            during = await cluster.read(key);
          },
        };
      });
      expect(invoked.outcome).toBe(200);
      expect(during).toEqual([token, token, token]);
    },
  },
  {
    id: "C3",
    promise:
      "every round a run starts is settled (or handed to waitUntil) before the invocation ends: with one node slow, the done marker or record is on every node, or the key is released on every node",
    notFor: {},
    async run(surface, cluster) {
      const { invoked, key } = await ranOnce(surface, cluster, async () => {
        await slowNext(cluster);
        return { status: 201 };
      });
      expect(invoked.ran).toBe(true);
      const values = await cluster.read(key);
      if (surface.ends === "release") expect(values).toEqual([null, null, null]);
      else for (const value of values) expect(value).toMatch(/^done:/);
    },
  },
  {
    id: "C4",
    promise:
      "a failed run's release is settled before the invocation ends: with one node slow, the key is free on every node",
    notFor: {},
    async run(surface, cluster) {
      const { invoked, key } = await ranOnce(surface, cluster, async () => {
        await slowNext(cluster);
        return "throw";
      });
      expect(invoked.ran).toBe(true);
      expect(await cluster.read(key)).toEqual([null, null, null]);
    },
  },
  {
    id: "C5",
    promise: "a successful run is kept: the retry replays it (HTTP) or is skipped (one-shot)",
    notFor: KEEP_NOTHING,
    async run(surface, cluster) {
      const { first, second } = await twice(surface, cluster, { status: 201 });
      expect(second.ran).toBe(false);
      if (first.outcome === 201) {
        expect(second).toEqual({ ran: false, outcome: 201, replayed: true });
      } else {
        expect(second.outcome).toBe("skipped");
      }
    },
  },
  {
    id: "C6",
    promise: "a run that threw is never kept: the retry runs the job",
    notFor: KEEP_NOTHING,
    async run(surface, cluster) {
      const { second } = await twice(surface, cluster, "throw");
      expect(second.ran).toBe(true);
    },
  },
  {
    id: "C7",
    promise:
      "a 5xx and the transient statuses (408, 409, 425, 429) are never kept: the retry runs the job",
    notFor: {
      ...KEEP_NOTHING,
      "lambda dedupeScheduled": NO_STATUS,
      "workers dedupeScheduled": NO_STATUS,
      "once()": NO_STATUS,
    },
    async run(surface, cluster) {
      for (const status of [500, 503, 408, 409, 425, 429]) {
        const { first, second } = await twice(surface, cluster, { status });
        expect(first.outcome).toBe(status);
        expect(second).toMatchObject({ ran: true, replayed: false });
      }
    },
  },
  {
    id: "C8",
    promise:
      "a lock layer's busy answer is never kept, whatever status the app's onBusy gives it (423, even 200), and also when the app's code between the layers answers a copy of it (a CORS header added): the retry runs the job",
    notFor: {
      "hono lock()": NO_LOCK_LAYER,
      "hono limit()": NO_LOCK_LAYER,
      "lambda withLock": NO_LOCK_LAYER,
      "lambda withLimit": NO_LOCK_LAYER,
      "lambda dedupeScheduled": NO_LOCK_LAYER,
      "workers dedupeScheduled": NO_LOCK_LAYER,
      "once()": NO_LOCK_LAYER,
    },
    async run(surface, cluster) {
      for (const copy of [false, true]) {
        for (const status of [423, 200]) {
          const { locks } = cluster.locks();
          const inner = `inner:${crypto.randomUUID()}`;
          const layer = { key: inner, status, locks: () => locks, copy };
          const instance = surface.overLock?.({ locks }, layer);
          if (instance === undefined) throw new Error(`${surface.name}: no overLock glue`);
          const holder = await locks.acquire(inner);
          const busy = await instance.invoke(async () => ({ status: 201 }));
          expect(busy).toEqual({ ran: false, outcome: status, replayed: false });
          await holder.release({ settled: true });
          const retry = await instance.invoke(async () => ({ status: 201 }));
          expect(retry).toEqual({ ran: true, outcome: 201, replayed: false });
        }
      }
    },
  },
  {
    id: "C12",
    promise:
      "a lock layer's unavailable answer (too few of its nodes answered) is never kept, whatever the app's onError answers (200 even) or if it is thrown: the retry runs the job",
    notFor: {
      "hono lock()": NO_LOCK_LAYER,
      "hono limit()": NO_LOCK_LAYER,
      "lambda withLock": NO_LOCK_LAYER,
      "lambda withLimit": NO_LOCK_LAYER,
      "lambda dedupeScheduled": NO_LOCK_LAYER,
      "workers dedupeScheduled": NO_LOCK_LAYER,
      "once()": NO_LOCK_LAYER,
    },
    async run(surface, cluster) {
      const { locks } = cluster.locks();
      const unreachable = cluster.unreachable();
      let down = true;
      const inner = {
        key: `inner:${crypto.randomUUID()}`,
        status: 200,
        locks: () => (down ? unreachable : locks),
      };
      const instance = surface.overLock?.({ locks }, inner);
      if (instance === undefined) throw new Error(`${surface.name}: no overLock glue`);
      const failed = await instance.invoke(async () => ({ status: 201 }));
      expect(failed.ran).toBe(false);
      // Hono: the app's onError answer; Lambda: withLock throws the QuorumError.
      expect([200, "threw"]).toContain(failed.outcome);
      down = false;
      const retry = await instance.invoke(async () => ({ status: 201 }));
      expect(retry).toEqual({ ran: true, outcome: 201, replayed: false });
    },
  },
  {
    id: "C9",
    promise:
      "a 503 (too few nodes answered) logs one server line by default — route, key, the cause in words, no token, no query string — and onUnavailable replaces it",
    notFor: {
      "lambda withLock": THROWS_INSTEAD,
      "lambda withLimit": THROWS_INSTEAD,
      "lambda dedupeScheduled": THROWS_INSTEAD,
      "workers dedupeScheduled": THROWS_INSTEAD,
      "once()": THROWS_INSTEAD,
    },
    async run(surface, cluster) {
      const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
      try {
        await Promise.all(
          [0, 1].map((i) => cluster.inject(i, { kind: "status", status: 500, body: "down" })),
        );
        const { locks } = cluster.locks();
        const job = async () => ({ status: 201 });
        const logged = await surface.build({ locks }).invoke(job);
        expect(logged).toMatchObject({ ran: false, outcome: 503 });
        expect(errors).toHaveBeenCalledOnce();
        const line = String(errors.mock.calls[0]?.[0]);
        // limit() names its semaphore; every other surface its lock.
        const subject = surface.name.startsWith("hono limit()") ? "semaphore" : "lock";
        expect(line).toMatch(
          new RegExp(`^edgelock: 503 for POST /(res/[0-9a-f-]+|charge) \\(${subject} "`),
        );
        expect(line).toContain("too few lock nodes answered");
        expect(line).not.toContain("s3cr3t");
        for (const node of cluster.nodes) expect(line).not.toContain(node.token);
        errors.mockClear();
        const told: unknown[] = [];
        const onUnavailable = (_c: unknown, info: unknown) => void told.push(info);
        const quiet = await surface.build({ locks, extra: { onUnavailable } }).invoke(job);
        expect(quiet).toMatchObject({ ran: false, outcome: 503 });
        expect(errors).not.toHaveBeenCalled();
        expect(told).toHaveLength(1);
        expect(told[0]).toMatchObject({ route: expect.stringMatching(/^POST \//) });
        expect((told[0] as { error: Error }).error.name).toBe("QuorumError");
      } finally {
        errors.mockRestore();
        await cluster.heal();
      }
    },
  },
  {
    id: "C10",
    promise:
      "an unknown option is refused with a ConfigurationError naming it, before any node is asked",
    notFor: {},
    async run(surface, cluster) {
      const { locks } = cluster.locks();
      expect(await refused(() => surface.construct({ locks, extra: { leaes: 1 } }))).toBe("leaes");
    },
  },
  {
    id: "C11",
    promise: "onUnavailable that is not a function is refused with a ConfigurationError naming it",
    notFor: {
      "lambda withLock": THROWS_INSTEAD,
      "lambda withLimit": THROWS_INSTEAD,
      "lambda dedupeScheduled": THROWS_INSTEAD,
      "workers dedupeScheduled": THROWS_INSTEAD,
      "once()": THROWS_INSTEAD,
    },
    async run(surface, cluster) {
      const { locks } = cluster.locks();
      expect(await refused(() => surface.construct({ locks, extra: { onUnavailable: 5 } }))).toBe(
        "onUnavailable",
      );
    },
  },
  C13,
];

/** The option a `ConfigurationError` names, thrown or rejected; `undefined` if accepted. */
async function refused(construct: () => unknown): Promise<string | undefined> {
  try {
    await construct();
  } catch (error) {
    if (isConfigurationError(error)) return error.option;
    throw error;
  }
  return undefined;
}

/** The kind a surface's name starts with. */
function kindOf(surface: Surface): Kind {
  const kind = KINDS.find((k) => surface.name.startsWith(k));
  if (kind === undefined) throw new Error(`${surface.name}: not a kind of the table`);
  return kind;
}

/**
 * Register the contract for `surfaces` on `cluster()` (a getter: the cluster starts in a hook).
 * Every (case, surface) pair becomes a test, or, where the case says it does not apply, a
 * `notFor` entry checked to name a reason.
 */
export function runContract(surfaces: readonly Surface[], cluster: () => ContractCluster): void {
  for (const surface of surfaces) {
    describe(surface.name, () => {
      for (const c of CASES) {
        const why = c.notFor[kindOf(surface)];
        if (why !== undefined) continue;
        it(`${c.id}: ${c.promise}`, () => c.run(surface, cluster()));
      }
    });
  }
}
