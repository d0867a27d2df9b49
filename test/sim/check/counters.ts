/**
 * One-shot keys' fence counters after quiescence (docs/SAFETY.md §5 J1): wherever a
 * done marker stands, the key's `:fence` counter (if the node has one) expires, and no earlier
 * than the marker. COMPLETE sets both in one step; afterwards nothing may take the counter's
 * expiry away while the marker stands (no token is placed over a marker, and a raise that does
 * not count keeps the expiry). Under any faults: a marker and its counter live on the same node.
 *
 * A plain lock's counter keeps no expiry (exempt: Theorem 2 across its releases needs it), and a
 * one-shot counter where the key holds no marker is not checked here (docs/SAFETY.md §5 J1 says when it expires).
 *
 * @module
 */

import type { Finding } from "./properties";

/** A key left on a node after quiescence. */
export interface Leftover {
  readonly node: number;
  readonly key: string;
  readonly value: string | null;
  /** Its PTTL on the node (-1 no expiry), when known. */
  readonly pttl?: number | undefined;
}

/**
 * Findings of property "counter-expiry": a done marker whose counter never expires, or expires
 * before it.
 *
 * @example
 * bugs.push(...oneShotCounters(remaining));
 */
export function oneShotCounters(remaining: readonly Leftover[]): Finding[] {
  const found: Finding[] = [];
  const byNode = new Map<string, Leftover>();
  for (const left of remaining) byNode.set(`${left.node} ${left.key}`, left);
  for (const left of remaining) {
    if (!(left.value ?? "").startsWith("done:") || left.pttl === undefined) continue;
    const counter = byNode.get(`${left.node} ${left.key}:fence`);
    if (counter?.pttl === undefined) continue;
    // Exact: the simulated nodes' clocks read whole milliseconds, as Redis's do.
    if (counter.pttl < 0 || counter.pttl < left.pttl) {
      found.push({
        property: "counter-expiry",
        detail: `node ${left.node}: ${counter.key} pttl ${counter.pttl} beside a done marker with pttl ${left.pttl}`,
      });
    }
  }
  return found;
}
