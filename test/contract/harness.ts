/**
 * What the adapter contract (`cases.ts`) needs from a runtime, and what a surface's row of glue
 * (`surfaces.ts`) provides. Runtime-neutral (plain `fetch`, no `node:*`): the same table runs in
 * Node (`contract.test.ts`) and inside workerd (`test/workers/contract.test.ts`).
 *
 * @module
 */

import type { Fault } from "../../src/dev/types";
import { createLocks, type Lock, type Locks } from "../../src/index";

/** `{ url, token }` of a dev node (REST endpoint with admin routes, `src/dev/admin.ts`). */
export interface DevNode {
  readonly url: string;
  readonly token: string;
}

/** The cluster as the contract drives it: faults and raw reads through each node's endpoint. */
export class ContractCluster {
  constructor(readonly nodes: readonly DevNode[]) {}

  async #call(i: number, path: string, method: string, body?: unknown): Promise<unknown> {
    const node = this.nodes[i];
    if (node === undefined) throw new Error(`no node ${i}`);
    const init: RequestInit = { method, headers: { Authorization: `Bearer ${node.token}` } };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await fetch(`${node.url}${path}`, init);
    const json = (await res.json()) as { result?: unknown; error?: string };
    if (!res.ok) throw new Error(`${method} ${path} on node ${i}: ${json.error}`);
    return json.result;
  }

  /** Inject `fault` on node `i` (script requests only unless it names a command). */
  inject(i: number, fault: Fault): Promise<unknown> {
    return this.#call(i, "/__edgelock/faults", "POST", fault);
  }

  /** Clear every fault. */
  async heal(): Promise<void> {
    await Promise.all(this.nodes.map((_, i) => this.#call(i, "/__edgelock/faults", "DELETE")));
  }

  /** The raw value of `fullKey` (with prefix) on every node, read now (`null`: absent). */
  read(fullKey: string): Promise<(string | null)[]> {
    return Promise.all(
      this.nodes.map(
        async (_, i) => (await this.#call(i, "/", "POST", ["GET", fullKey])) as string,
      ),
    ).then((values) => values.map((v) => v ?? null));
  }

  /** A manager whose nodes answer nothing (a closed port): every acquire is a `QuorumError`. */
  unreachable(): Locks {
    const nodes = this.nodes.map((n, i) => ({ url: `http://127.0.0.${i + 1}:9`, token: n.token }));
    return createLocks({ nodes, requestTimeout: 500 });
  }

  /** A manager over these nodes with a prefix no other test uses (lease 10 s, timeout 2 s). */
  locks(): { locks: Locks; prefix: string } {
    const prefix = `contract:${crypto.randomUUID()}:`;
    return {
      prefix,
      locks: createLocks({ nodes: [...this.nodes], prefix, lease: 10_000, requestTimeout: 2_000 }),
    };
  }
}

/**
 * What a job answers: an HTTP status (a surface without responses treats any as success), or a
 * throw. `stream`: the body is produced after the handler returned, by this producer (surfaces
 * that stream bodies; the others ignore it).
 */
export type JobAnswer =
  | { readonly status: number; readonly stream?: (lock: Lock) => Promise<void> }
  | "throw";

/** A job: the work the surface protects, given the lock (or claim) it runs under. */
export type Job = (lock: Lock) => Promise<JobAnswer>;

/** What one invocation did, once the runtime considers it over. */
export interface Invoked {
  /** The job ran in this invocation. */
  readonly ran: boolean;
  /** The HTTP status answered; `"threw"` (the invocation failed); `"skipped"` (a one-shot duplicate); `"ok"` (no response). */
  readonly outcome: number | "threw" | "skipped" | "ok";
  /** Answered with `Idempotency-Replayed: true`. */
  readonly replayed: boolean;
}

/** Glue options every surface understands (some ignore parts, see each row). */
export interface Build {
  readonly locks: Locks;
  /** Extra options passed to the wrapper as given (an unknown one, `onUnavailable`, …). */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** One instance of a surface: one protected resource (a route and key, a job occurrence). */
export interface Instance {
  /**
   * One invocation of the resource: resolves when the runtime considers it over — Lambda and
   * Node: the wrapper's promise (and the response body read); Workers: also every `waitUntil`.
   */
  invoke(job: Job): Promise<Invoked>;
}

/** A surface's row of glue. */
export interface Surface {
  readonly name: string;
  /** How a successful run ends its lock: released, or completed into a done marker / record. */
  readonly ends: "release" | "complete";
  /** A fresh instance (its own key / Idempotency-Key / occurrence). */
  build(build: Build): Instance;
  /**
   * Build the wrapper only (no invocation), to see what it refuses; for `once()`, which takes
   * its options per call, the call itself.
   */
  construct(build: Build): unknown;
  /**
   * The surface wrapped around a lock layer (idempotency over `lock()` / `withLock`, or over
   * `limit()` / `withLimit`) whose `onBusy` (and, where it has one, `onError`) answers
   * `inner.status`.
   */
  overLock?(build: Build, inner: InnerLock): Instance;
}

/** The lock layer inside an idempotency surface. */
export interface InnerLock {
  /** Its key. */
  readonly key: string;
  /** What the app's `onBusy` / `onError` answer. */
  readonly status: number;
  /** Its manager, asked per request (a case may switch to one whose nodes cannot answer). */
  readonly locks: () => Locks;
  /**
   * The app's code between the two layers answers a copy of the lock layer's answer (a CORS
   * header added), not that answer itself.
   */
  readonly copy?: boolean;
  /**
   * The layer: `lock()` / `withLock` (default), or `limit()` / `withLimit` with one permit (its
   * key the semaphore's name).
   */
  readonly layer?: "lock" | "limit";
}

/** The context fields of a Lambda invocation that the wrappers read. */
export function lambdaContext(remainingMs = 30_000) {
  const deadline = performance.now() + remainingMs;
  return {
    awsRequestId: crypto.randomUUID(),
    functionName: "contract",
    invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:contract",
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(deadline - performance.now())),
  };
}
