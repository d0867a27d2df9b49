import type { Budget } from "../budget";
import { TransportError } from "../errors";
import type { RestNode } from "../node";
import type { Script } from "./scripts";

/** Options of {@link evalScript}. */
export interface EvalOptions {
  /** Time for the whole call on this node, fallback and retry included, in ms. */
  readonly timeoutMs: number;
  /** Charged 1 per HTTP request. */
  readonly budget?: Budget | undefined;
  /**
   * Node requests to leave in the budget's allowance: a retry after a network failure is only
   * sent while more than this many remain (the NOSCRIPT fallback is always sent).
   */
  readonly spare?: number;
  /** Called before a request is re-sent after a network failure (the first may have run). */
  readonly onRetry?: () => void;
  /**
   * Wait for earlier requests on the same key and node that should land first (our releases in
   * flight: `ReleaseOrder.after`) before sending, for at most half of `timeoutMs`; then the request
   * is sent anyway with the time left. The order only spares a needless refusal, never safety
   * (every request may have run, in any order), so running out of patience is no failure.
   */
  readonly after?: ((ms: number) => Promise<unknown>) | undefined;
  /**
   * The round's shared timeout signal (see `RestNode.send`); used only when nothing was waited for
   * first (`after`), since it fires `timeoutMs` after the round started.
   */
  readonly signal?: AbortSignal | undefined;
}

const NOSCRIPT = /noscript/i;

/**
 * The SHA-1 of every script this process has sent by EVAL, by source. A memory node
 * (`src/memory`) reads it to cache such an EVAL under its SHA-1 at once: the platforms' own SHA-1
 * (WebCrypto) is asynchronous, and a script whose EVAL waited for it would run after the round
 * that sent it had resolved on a majority. Filled here, not from a list of every script, so a
 * memory node knows the scripts of whichever rooms the app uses (the lock's, the semaphore's)
 * without bundling any of them.
 *
 * @example
 * SENT_SCRIPTS.get(ACQUIRE.lua); // ACQUIRE.sha1, once an acquire was sent by EVAL
 */
export const SENT_SCRIPTS = new Map<string, string>();

function describe(reply: unknown): string {
  if (Array.isArray(reply)) return `an array of ${reply.length}`;
  return reply === null ? "null" : `a ${typeof reply}`;
}

/**
 * Run `script` on one node: EVALSHA, and on a NOSCRIPT reply (matched case-insensitively: Redis
 * and Valkey word it differently) one EVAL with the source. The first call per node and script
 * goes straight to EVAL, which also loads the script, so a cold node costs one request, not two.
 *
 * All edgelock scripts are idempotent for a given token (a re-run acquire finds its own token), so
 * a request that failed at the network level (connection reset or refused, before or after the
 * command ran) is sent once more while time and budget allow. Timeouts are not retried.
 *
 * The reply's shape is checked; anything else is a `TransportError` of kind `"reply"`.
 *
 * @throws {TransportError} naming the node by index and host
 * @example
 * const reply = await evalScript(node, RELEASE, [key, fenceKey], [token], { timeoutMs: 500 });
 */
export async function evalScript<T>(
  node: RestNode,
  script: Script<T>,
  keys: readonly string[],
  args: string[],
  options: EvalOptions,
): Promise<T> {
  const { budget, spare = 0 } = options;
  const deadline = performance.now() + options.timeoutMs;
  const shared = options.after === undefined ? options.signal : undefined;
  // A release that has not ended by then is slow, or will never report back (on Workers, one left
  // running by a request that ended): half the time at most, the request keeps the other half.
  if (options.after !== undefined) await options.after(Math.floor(options.timeoutMs / 2));
  let fellBack = false;
  let retried = false;
  const keyList = [...keys];
  for (;;) {
    const useEval = !node.knownScripts.has(script.sha1);
    if (useEval) SENT_SCRIPTS.set(script.lua, script.sha1);
    const timeLeft = Math.max(1, Math.round(deadline - performance.now()));
    budget?.charge(1);
    try {
      const reply = await node.send(
        (redis) =>
          useEval
            ? redis.eval(script.lua, keyList, args)
            : redis.evalsha(script.sha1, keyList, args),
        timeLeft,
        shared,
      );
      node.knownScripts.add(script.sha1);
      const parsed = script.parse(reply);
      if (parsed === undefined) {
        throw new TransportError(
          node.index,
          node.host,
          "reply",
          `unexpected reply to the ${script.name} script: ${describe(reply)}`,
        );
      }
      return parsed;
    } catch (error) {
      if (!(error instanceof TransportError) || error.kind === "reply") throw error;
      if (!useEval && !fellBack && error.kind === "server" && NOSCRIPT.test(error.message)) {
        // The node lost its script cache (restart, SCRIPT FLUSH): send the source once.
        node.knownScripts.delete(script.sha1);
        fellBack = true;
        continue;
      }
      const mayRetry =
        error.kind === "network" &&
        !retried &&
        deadline - performance.now() > 1 &&
        (budget === undefined || budget.remainingSubrequests() > spare);
      if (!mayRetry) throw error;
      retried = true;
      options.onRetry?.();
    }
  }
}
