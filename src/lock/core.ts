import type { Budget } from "../budget/budget";
import type { NodeStatus } from "../errors";
import type { RestNode } from "../node/node";
import { FENCE_SUFFIX, type ResolvedOptions } from "../options";
import { fanOut, type NodeAnswer, type Round } from "../quorum/fanout";
import { defaultRequestTimeout } from "../quorum/timeout";
import {
  ACQUIRE,
  type CasReply,
  COMPLETE,
  type CompleteReply,
  EXTEND,
  evalScript,
  FENCE_RAISE,
  FORCE_RELEASE,
  INSPECT,
  RELEASE,
} from "../scripts";
import type { LockEvent } from "./types";

/** The lock key and its fence counter key on every node. */
export type Keys = [lockKey: string, fenceKey: string];

const casStatus = (reply: CasReply): NodeAnswer<CasReply>["status"] =>
  reply === 1 ? "ok" : reply === 0 ? "absent" : "held";

const isOk = (status: NodeStatus): boolean => status === "ok";
/** For release: any answer means our token is gone from that node. */
const answered = (status: NodeStatus): boolean =>
  status === "ok" || status === "absent" || status === "held";

/** For complete: the done marker is on that node (written now, or already there). */
const recorded = (status: NodeStatus): boolean => status === "ok" || status === "done";

/**
 * What every operation of one `Locks` instance shares: the resolved options, the nodes, and one
 * method per script round. Each round is one {@link fanOut}.
 */
export class LockCore {
  readonly nodes: readonly RestNode[];
  readonly quorum: number;

  constructor(readonly options: ResolvedOptions) {
    this.nodes = options.nodes;
    this.quorum = options.quorum;
  }

  keys(key: string): Keys {
    const lockKey = `${this.options.prefix}${key}`;
    return [lockKey, `${lockKey}${FENCE_SUFFIX}`];
  }

  /** Per-node timeout for a round granting `ttl` ms. */
  timeoutFor(ttl: number): number {
    return this.options.requestTimeout ?? defaultRequestTimeout(ttl);
  }

  /** Send an event to the hook; a throwing or rejecting hook never affects the lock. */
  emit(event: LockEvent): void {
    const hook = this.options.onEvent;
    if (hook === undefined) return;
    try {
      const result: unknown = hook(event);
      if (result instanceof Promise) result.catch(() => {});
    } catch {
      // Observability must not break locking.
    }
  }

  /** Acquire round: `ok` (value = fence), `held` (pttl), or `done` (the done marker's pttl). */
  acquireRound(
    keys: Keys,
    token: string,
    ttl: number,
    timeoutMs: number,
    budget: Budget | undefined,
  ): Promise<Round<number>> {
    const fencing = this.options.fencing;
    const args = [token, String(ttl), fencing ? "1" : "0"];
    const spare = this.nodes.length;
    return fanOut(
      this.nodes,
      async (node) => {
        const reply = await evalScript(node, ACQUIRE, keys, args, { timeoutMs, budget, spare });
        if (!reply.granted) return { status: reply.done ? "done" : "held", pttl: reply.pttl };
        return fencing
          ? { status: "ok", value: reply.fence, fence: reply.fence }
          : { status: "ok" };
      },
      { quorum: this.quorum, isFor: isOk },
    );
  }

  /** Fence raise on `nodes`: counters go up to at least `fence`; needs a majority of all nodes. */
  raiseRound(
    nodes: readonly RestNode[],
    keys: Keys,
    fence: number,
    timeoutMs: number,
    budget: Budget | undefined,
  ): Promise<Round<number>> {
    const args = [String(fence)];
    return fanOut(
      nodes,
      async (node) => {
        const counter = await evalScript(node, FENCE_RAISE, keys, args, { timeoutMs, budget });
        return { status: "ok", value: counter, fence: counter };
      },
      { quorum: this.quorum, isFor: isOk },
    );
  }

  /** Extend round: compare-and-PEXPIRE; `ok` extended, `absent` expired, `held` taken over. */
  extendRound(
    keys: Keys,
    token: string,
    ttl: number,
    timeoutMs: number,
    budget: Budget | undefined,
  ): Promise<Round<CasReply>> {
    const args = [token, String(ttl)];
    const spare = this.nodes.length;
    return fanOut(
      this.nodes,
      async (node) => {
        const reply = await evalScript(node, EXTEND, keys, args, { timeoutMs, budget, spare });
        return { status: casStatus(reply), value: reply };
      },
      { quorum: this.quorum, isFor: isOk },
    );
  }

  /**
   * Release round on `nodes` (default: all): compare-and-DEL. Decided once a majority answered
   * (`ok` deleted, `absent`, `held`), so a slow minority does not slow it; or, with `waitAll`,
   * once every node answered (cleanup after a failed acquire).
   */
  releaseRound(
    keys: Keys,
    token: string,
    timeoutMs: number,
    budget: Budget | undefined,
    nodes: readonly RestNode[] = this.nodes,
    waitAll = false,
  ): Promise<Round<CasReply>> {
    return fanOut(
      nodes,
      async (node) => {
        let resent = false;
        const onRetry = () => {
          resent = true;
        };
        const reply = await evalScript(node, RELEASE, keys, [token], {
          timeoutMs,
          budget,
          onRetry,
        });
        // "Absent" right after re-sending a request whose connection broke most likely means the
        // first attempt deleted it: report the deletion.
        const status = resent && reply === 0 ? "ok" : casStatus(reply);
        return { status, value: reply };
      },
      { quorum: Math.min(this.quorum, nodes.length), isFor: answered, waitAll },
    );
  }

  /**
   * Complete round (`once()`): turn our grant into a done marker kept `retention` ms. `ok` written
   * (the key held our token or was absent), `done` already recorded, `held` someone else holds the
   * key (left alone). Decided once a majority wrote or found the marker.
   */
  completeRound(
    keys: Keys,
    token: string,
    retention: number,
    timeoutMs: number,
    budget: Budget | undefined,
  ): Promise<Round<CompleteReply>> {
    const args = [token, String(retention)];
    return fanOut(
      this.nodes,
      async (node) => {
        const reply = await evalScript(node, COMPLETE, keys, args, { timeoutMs, budget });
        const status = reply === 1 ? "ok" : reply === 2 ? "done" : "held";
        return { status, value: reply };
      },
      { quorum: this.quorum, isFor: recorded },
    );
  }

  /** Inspect every node: `held` with pttl (-1 = no expiry) or `absent`; fence counter. */
  inspectRound(keys: Keys, timeoutMs: number): Promise<Round<number>> {
    return fanOut(
      this.nodes,
      async (node) => {
        const reply = await evalScript(node, INSPECT, keys, [], { timeoutMs });
        return reply.pttl === -2
          ? { status: "absent", fence: reply.fence, value: reply.fence }
          : { status: "held", pttl: reply.pttl, fence: reply.fence, value: reply.fence };
      },
      { quorum: this.quorum, isFor: answered, waitAll: true },
    );
  }

  /** Unconditional DEL of the lock key on every node. */
  forceReleaseRound(keys: Keys, timeoutMs: number): Promise<Round<number>> {
    return fanOut(
      this.nodes,
      async (node) => {
        const deleted = await evalScript(node, FORCE_RELEASE, keys, [], { timeoutMs });
        return { status: deleted === 1 ? "ok" : "absent", value: deleted };
      },
      { quorum: this.quorum, isFor: answered, waitAll: true },
    );
  }
}
