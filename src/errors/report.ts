import type { NodeOutcome } from "./base";

/** Longest reason kept per node; longer ones are cut with "…" (shortened, never dropped). */
const REASON_MAX = 120;

const shorten = (text: string): string =>
  text.length <= REASON_MAX ? text : `${text.slice(0, REASON_MAX - 1)}…`;

/** The node as errors name it: by index and host, never by URL or token. */
export const nodeName = (o: Pick<NodeOutcome, "index" | "host">): string =>
  `node ${o.index} (${o.host})`;

/** The outcome failed to answer (`timeout`, `error`) or had not answered yet (`pending`). */
export const isUnanswered = (o: NodeOutcome): boolean =>
  o.status === "timeout" || o.status === "error" || o.status === "pending";

/** The outcome failed (`timeout`, `error`). */
export const isFailed = (o: NodeOutcome): boolean => o.status === "timeout" || o.status === "error";

/** The node no longer holds our token: it is gone (`absent`) or another's (`held`). */
export const isGone = (o: NodeOutcome): boolean => o.status === "absent" || o.status === "held";

/** The node rejected the token (HTTP 401/403): a configuration fault no retry fixes. */
export const isRejected = (o: NodeOutcome): boolean => o.error?.kind === "auth";

/**
 * What one node's outcome says against the operation, in words, or `undefined` when it said
 * nothing against it (`ok`; `absent` unless `absent` gives its words: a token looked for).
 *
 * @example
 * reasonOf({ index: 1, host: "h", status: "timeout", error }) // "no answer within 500 ms"
 */
export function reasonOf(o: NodeOutcome, absent?: string): string | undefined {
  switch (o.status) {
    case "absent":
      return absent;
    case "held":
      return o.reserved === true
        ? "reserved for a waiter a release woke"
        : `held by another caller${o.pttl !== undefined && o.pttl >= 0 ? ` for ${o.pttl} ms more` : ""}`;
    case "done":
      return `job done (done marker${o.pttl !== undefined && o.pttl >= 0 ? ` kept ${o.pttl} ms more` : ""})`;
    case "pending":
      return "no answer yet";
    case "timeout":
    case "error": {
      const message = o.error?.message ?? o.status;
      // A TransportError's message starts with the node's name, which the list adds itself.
      const prefix = `${nodeName(o)}: `;
      return shorten(message.startsWith(prefix) ? message.slice(prefix.length) : message);
    }
    default:
      return undefined;
  }
}

/**
 * The nodes of `outcomes` that said something against the operation, each with its reason:
 * `node 1 (eu1-x.upstash.io): no answer within 500 ms; node 2 (…): held by another caller`.
 * Empty when none did. `only` narrows the list (e.g. failures only); `absent`: the words for a
 * node where the token looked for is gone (by default an absent key says nothing against).
 *
 * @example
 * `no majority: ${describeNodes(error.outcomes)}`
 */
export function describeNodes(
  outcomes: readonly NodeOutcome[],
  only: (o: NodeOutcome) => boolean = () => true,
  absent?: string,
): string {
  const parts: string[] = [];
  for (const o of outcomes) {
    const reason = only(o) ? reasonOf(o, absent) : undefined;
    if (reason !== undefined) parts.push(`${nodeName(o)}: ${reason}`);
  }
  return parts.join("; ");
}

/**
 * When every node that failed rejected the token, what to fix, first: `check the nodes' tokens
 * (EDGELOCK_NODES or the nodes option): node 0 (…) rejected the token`. `undefined` otherwise.
 *
 * @example
 * const fix = configurationFault(outcomes); if (fix) message = `${fix}. ${message}`;
 */
export function configurationFault(outcomes: readonly NodeOutcome[]): string | undefined {
  const failed = outcomes.filter(isFailed);
  if (failed.length === 0 || !failed.every(isRejected)) return undefined;
  const names = failed.map(nodeName).join(", ");
  const verb = failed.length === 1 ? "rejects" : "reject";
  return `check the nodes' tokens (EDGELOCK_NODES or the nodes option): ${names} ${verb} the token`;
}

/**
 * `why`, after what to fix first when every node that failed rejected the token (see
 * {@link configurationFault}).
 *
 * @example
 * new QuorumError(key, withFix(outcomes, `extension failed: ${nodes}`), { outcomes });
 */
export function withFix(outcomes: readonly NodeOutcome[], why: string): string {
  const fix = configurationFault(outcomes);
  return fix === undefined ? why : `${fix}. ${why}`;
}
