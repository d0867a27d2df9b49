import { type NodeOutcome, type NodeStatus, TransportError } from "../errors";

/** What a node's operation reports when it answered (failures are thrown as `TransportError`). */
export interface NodeAnswer<T> {
  readonly status: Exclude<NodeStatus, "timeout" | "error" | "pending">;
  readonly value?: T;
  readonly pttl?: number;
  readonly fence?: number;
  /** An acquire refused by a holder this node placed: the holder's place (the queue's order). */
  readonly ahead?: number;
}

/** The node identity the fan-out needs. */
export interface FanOutNode {
  readonly index: number;
  readonly host: string;
}

/** Options of {@link fanOut}. */
export interface FanOutOptions {
  /** Votes needed for success (⌊N/2⌋+1 for a majority). */
  readonly quorum: number;
  /** Which answered statuses count for; everything else (failures included) counts against. */
  readonly isFor: (status: NodeStatus) => boolean;
  /** Wait for every node before deciding (inspect, force release). */
  readonly waitAll?: boolean;
}

/** The outcome of one round. */
export interface Round<T> {
  /** At least `quorum` nodes voted for. */
  readonly ok: boolean;
  /** Per-node outcomes when the round was decided; undecided nodes are `"pending"`. */
  readonly outcomes: readonly NodeOutcome[];
  /** Per-node values of nodes that answered, by index. */
  readonly values: ReadonlyMap<number, T>;
  /** Resolves with every node's final outcome once all have answered or failed. */
  readonly settled: Promise<readonly NodeOutcome[]>;
  /** Per-node promises of the final outcome (for work that must follow a slow node's answer). */
  readonly each: readonly Promise<NodeOutcome>[];
  /** `performance.now()` taken before the first request. */
  readonly startedAt: number;
}

function failure(node: FanOutNode, error: unknown, latencyMs: number): NodeOutcome {
  const transport =
    error instanceof TransportError
      ? error
      : new TransportError(node.index, node.host, "network", String(error), { cause: error });
  const status: NodeStatus = transport.kind === "timeout" ? "timeout" : "error";
  return { index: node.index, host: node.host, status, latencyMs, error: transport };
}

/**
 * Run `op` on every node in parallel and resolve as soon as the round is decided: `quorum` votes
 * for, or so many against that `quorum` has become impossible. A slow minority therefore never
 * slows a round; its requests keep running and their outcomes arrive in `settled` / `each`.
 *
 * Never rejects: a node's thrown error becomes its outcome (`"timeout"` or `"error"`).
 *
 * @example
 * const round = await fanOut(nodes, (n) => release(n), { quorum: 2, isFor: (s) => s !== "error" });
 */
export function fanOut<N extends FanOutNode, T>(
  nodes: readonly N[],
  op: (node: N) => Promise<NodeAnswer<T>>,
  options: FanOutOptions,
): Promise<Round<T>> {
  const { quorum, isFor, waitAll = false } = options;
  const startedAt = performance.now();
  const current: NodeOutcome[] = nodes.map((n) => ({
    index: n.index,
    host: n.host,
    status: "pending",
  }));
  const values = new Map<number, T>();
  let votesFor = 0;
  let votesAgainst = 0;
  let answered = 0;

  return new Promise<Round<T>>((resolve) => {
    let decided = false;
    const each: Promise<NodeOutcome>[] = [];
    const decide = (ok: boolean) => {
      decided = true;
      resolve({
        ok,
        outcomes: current.slice(),
        values: new Map(values),
        settled: Promise.all(each),
        each,
        startedAt,
      });
    };
    const record = (position: number, outcome: NodeOutcome): NodeOutcome => {
      current[position] = outcome;
      answered += 1;
      if (isFor(outcome.status)) votesFor += 1;
      else votesAgainst += 1;
      if (decided) return outcome;
      if (waitAll) {
        if (answered === nodes.length) decide(votesFor >= quorum);
      } else if (votesFor >= quorum) {
        decide(true);
      } else if (votesAgainst > nodes.length - quorum) {
        decide(false);
      }
      return outcome;
    };
    nodes.forEach((node, position) => {
      const promise = (async (): Promise<NodeOutcome> => {
        const began = performance.now();
        try {
          const answer = await op(node);
          const latencyMs = performance.now() - began;
          if (answer.value !== undefined) values.set(node.index, answer.value);
          const outcome: NodeOutcome = {
            index: node.index,
            host: node.host,
            status: answer.status,
            latencyMs,
            ...(answer.pttl === undefined ? {} : { pttl: answer.pttl }),
            ...(answer.fence === undefined ? {} : { fence: answer.fence }),
          };
          return record(position, outcome);
        } catch (error) {
          return record(position, failure(node, error, performance.now() - began));
        }
      })();
      each.push(promise);
    });
    if (nodes.length === 0) decide(quorum <= 0);
  });
}
