import type { Budget } from "../budget";
import {
  ConfigurationError,
  describeNodes,
  isGone,
  LockLostError,
  QuorumError,
  withFix,
} from "../errors";
import { grantOf } from "./acquire";
import type { LockCore } from "./core";
import { budgetShortfall, cleanup } from "./failure";
import type { Grant } from "./grant";
import { checkKeys, type KeySet } from "./keyset";
import { judge } from "./look";
import { MAX_LEASE } from "./options";
import type { RoundSpec } from "./spec";
import { newToken } from "./timing";
import type { LockTicket } from "./types";

const TOKEN = /^[0-9a-f]{32}$/;

const bad = (field: string, message: string) => new ConfigurationError(`ticket.${field}`, message);

/**
 * A ticket as `lock.ticket()` made it, for this manager's nodes and prefix: every field checked,
 * so a message that was truncated, edited or meant for another deployment fails here, naming the
 * field, before any request.
 *
 * @throws {ConfigurationError} `ticket` or `ticket.<field>`
 * @example
 * const { ticket, target } = checkTicket(JSON.parse(body).ticket, core);
 */
export function checkTicket(
  ticket: unknown,
  core: LockCore,
): { readonly ticket: LockTicket; readonly target: KeySet } {
  if (typeof ticket !== "object" || ticket === null) {
    throw new ConfigurationError("ticket", "expected the object lock.ticket() returned");
  }
  const t = ticket as Partial<Record<keyof LockTicket, unknown>>;
  if (t.v !== 1) throw bad("v", `unsupported ticket version ${String(t.v)}`);
  const target = checkKeys(t.key, core.options.fencing, "ticket.key");
  if (typeof t.token !== "string" || !TOKEN.test(t.token)) {
    throw bad("token", "expected 32 lower-case hex digits");
  }
  const { fence, lease, nodes, prefix } = t;
  if (fence !== null && !(Number.isSafeInteger(fence) && (fence as number) > 0)) {
    throw bad("fence", "expected a positive integer or null");
  }
  if (!(Number.isSafeInteger(lease) && (lease as number) > 0 && (lease as number) <= MAX_LEASE)) {
    throw bad("lease", `expected a positive integer (ms) up to ${MAX_LEASE}`);
  }
  if (typeof t.validUntil !== "number") throw bad("validUntil", "expected epoch ms");
  if (prefix !== core.options.prefix) {
    throw bad(
      "prefix",
      `made for prefix ${JSON.stringify(prefix)}, this manager uses ${JSON.stringify(core.options.prefix)}`,
    );
  }
  const ours = core.nodes.map((node) => node.host);
  if (!Array.isArray(nodes) || nodes.join(",") !== ours.join(",")) {
    const theirs = Array.isArray(nodes) ? nodes.join(", ") : String(nodes);
    throw bad("nodes", `made for nodes [${theirs}], this manager has [${ours.join(", ")}]`);
  }
  return { ticket: ticket as LockTicket, target };
}

/**
 * Take the ticket's lock over (docs/SAFETY.md §3 "resume", §4 Theorem 3): one RESUME round swaps
 * the ticket's token for a fresh one on every node that still holds it, never shortening its
 * expiry, and is judged like an acquire round ({@link judge}): a majority of swaps, with fencing a
 * fresh fence raised on a majority, and the validity left counted from this round's start.
 * Anything less is undone — the ticket's token put back wherever ours replaced it, ours
 * tombstoned so that a late RESUME of this round swaps nothing, every node awaited — and
 * reported: gone on a majority
 * → `LockLostError`, otherwise `QuorumError`, after which a redelivery of the same ticket can
 * still resume it. Gone on a majority while a node holds the ticket's record of failed resumes
 * is a `QuorumError` too: the nodes "held" may hold a failed resume's token until its undo lands.
 *
 * @example
 * const grant = await resumeGrant(core, checkTicket(message.ticket, core), budget);
 */
export async function resumeGrant(
  core: LockCore,
  { ticket, target }: { readonly ticket: LockTicket; readonly target: KeySet },
  budget: Budget | undefined,
): Promise<Grant> {
  const { options, nodes, quorum } = core;
  const n = nodes.length;
  const { lease } = ticket;
  const key = target.name;
  const keys = core.keys(target.keys);
  const ttl = budget === undefined ? lease : budget.ttl(lease);
  const roundCost = options.fencing && n > 1 ? 2 * n : n;
  // The round (and fence raise) and a release afterwards.
  const needs = { ttl, requests: roundCost + n };
  const shortfall = budget === undefined ? undefined : budgetShortfall(core, budget, needs);
  if (shortfall !== undefined) throw shortfall;
  const token = newToken();
  const timeoutMs = core.timeoutFor(ttl);
  const seen = { undone: false };
  const spec: RoundSpec = { keys, token, ttl, timeoutMs, budget };
  const round = await core.resumeRound(spec, ticket.token, seen);
  const verdict = await judge(core, round, spec);
  const { outcomes, durationMs } = verdict;
  if (verdict.granted) {
    core.emit({ type: "resume", key, result: "resumed", durationMs, outcomes });
    return grantOf(core, target, { round, verdict, terms: spec, lease, tombstones: false });
  }
  // Undo: the ticket's token goes back wherever ours replaced it, so that a redelivery of the
  // ticket can still resume it (docs/SAFETY.md §4, Theorem 3).
  const restored = await cleanup(core, round, spec, ticket.token);
  // Every node's answer (the undo waited for the slow ones already; each request is bounded by
  // its timeout): the error names every node where the ticket's token is gone.
  const settled = await round.settled;
  const gone = settled.filter(isGone);
  // Lost only when the ticket's token is gone from a majority; a resume that swapped on a
  // majority but too late (validity below minValidity) was undone like any failed one, so a
  // redelivery can still resume: that is a QuorumError. So is a majority gone while the ticket's
  // token was still on some node (we swapped it there) and a node holds the ticket's record of
  // failed resumes: a node "held" may hold such a resume's token, its undo still on the way,
  // after which the ticket is resumable again (docs/SAFETY.md §4, Theorem 3). A duplicate after
  // a successful resume finds the ticket's token nowhere: LockLostError.
  const undoing =
    seen.undone && settled.some((o) => o.status === "ok") && gone.some((o) => o.status === "held");
  if (!verdict.invalid && !round.ok && !undoing && gone.length > n - quorum) {
    core.emit({ type: "resume", key, result: "lost", durationMs, outcomes: settled });
    const where = describeNodes(gone, undefined, "the token is gone");
    const why = `the ticket's lock expired, was released or was resumed already on ${gone.length} of ${n} nodes (${where})`;
    throw new LockLostError(key, why, { outcomes: settled });
  }
  core.emit({ type: "resume", key, result: "unavailable", durationMs, outcomes });
  const undo =
    undoing && gone.length > n - quorum
      ? "a failed earlier resume of this ticket was undone on some nodes and may still hold others until its undo lands there: a later redelivery can resume it then (or learns it was resumed)"
      : restored
        ? "the ticket's lock is as it was: a redelivery can resume it"
        : "putting the ticket's lock back did not answer on every node yet: a redelivery may find it held there until it lands";
  const why = `resume failed: ${verdict.why ?? "no majority"}: ${describeNodes(outcomes)}; ${undo}`;
  throw new QuorumError(key, withFix(outcomes, why), { outcomes });
}
