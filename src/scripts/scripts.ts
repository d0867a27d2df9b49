import {
  ACQUIRE_LUA,
  ACQUIRE_SHA1,
  COMPLETE_LUA,
  COMPLETE_SHA1,
  DISCARD_LUA,
  DISCARD_SHA1,
  EXTEND_LUA,
  EXTEND_SHA1,
  FENCE_RAISE_LUA,
  FENCE_RAISE_SHA1,
  FORCE_RELEASE_LUA,
  FORCE_RELEASE_SHA1,
  HANDOVER_LUA,
  HANDOVER_SHA1,
  INSPECT_LUA,
  INSPECT_SHA1,
  LEAVE_LUA,
  LEAVE_SHA1,
  PASS_LUA,
  PASS_SHA1,
  RECORD_LUA,
  RECORD_SHA1,
  RELEASE_LUA,
  RELEASE_SHA1,
  RESUME_LUA,
  RESUME_SHA1,
} from "./shipped";

/**
 * A Lua script as shipped (`shipped.ts`: its commented source in `lua.ts` minus comments and
 * whitespace, locals renamed short) with its SHA-1 (lower-case hex of that UTF-8 text), its argument builder and its
 * reply-shape check: `args` puts named fields (`A`) in the order the Lua's locals read them from
 * ARGV, so that order lives here and in the Lua only; `parse` returns `undefined` for a reply of
 * the wrong shape.
 */
export interface Script<T, A = never> {
  readonly name: string;
  readonly lua: string;
  readonly sha1: string;
  readonly args: (input: A) => string[];
  readonly parse: (reply: unknown) => T | undefined;
}

/** The arguments of a script that takes none (INSPECT, RECORD, FORCE_RELEASE). */
export type NoArgs = Readonly<Record<string, never>>;

const noArgs = (): string[] => [];

const flag = (on: boolean): string => (on ? "1" : "0");

/**
 * A waiting call's registration in a key's queue (see `QUEUE` in `lua.ts`), sent with each of its
 * looks and passes: the node records it with the node time it ran, and hands the key to it when
 * it is the first live waiter there.
 */
export interface QueueRegistration {
  /** Epoch ms of its call: the queues' order, the same on every node. */
  readonly place: number;
  /** The number of this look (or pass) of the call: 1, 2, … in the order they are sent. */
  readonly look: number;
  /** Its instance's channel id: hand-offs are published on `<queue key>:<listener>`. */
  readonly listener: string;
  /** How much longer the call waits at most, in ms (the node drops it after that). */
  readonly waitMs: number;
  /** The TTL of a hand-off to it, in ms. */
  readonly handMs: number;
  /** Keep the queue at least this long, in ms. */
  readonly roomMs: number;
  /** A hand-off to it issues a fence. */
  readonly fencing: boolean;
}

/** A registration as ARGV (ACQUIRE's from ARGV[4], PASS's from ARGV[2], in this order). */
function registrationArgs(queue: QueueRegistration): string[] {
  const { place, look, listener, waitMs, handMs, roomMs, fencing } = queue;
  return [place, look, listener, waitMs, handMs, roomMs].map(String).concat(flag(fencing));
}

/** ACQUIRE's arguments (see `ACQUIRE_LUA`). */
export interface AcquireArgs {
  readonly token: string;
  /** The lease, in ms. */
  readonly ttl: number;
  readonly fencing: boolean;
  /**
   * The caller's place (epoch ms of its call): a free key goes to a live waiter placed before it
   * first. `undefined`: placed after every waiter (a caller that does not wait).
   */
  readonly place?: number | undefined;
  /** A waiting call's registration, kept while the key is held; its `place` is the caller's. */
  readonly queue?: QueueRegistration | undefined;
}

const isInt = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value);

/** A reply that is an array of exactly `length` safe integers. */
function intArray(reply: unknown, length: number): number[] | undefined {
  return Array.isArray(reply) && reply.length === length && reply.every(isInt)
    ? (reply as number[])
    : undefined;
}

/**
 * Acquire reply: `granted` with `fence` (0 without fencing); or not granted with the key's `pttl`,
 * and `done: true` when the key holds a done marker of `once()` rather than another holder's token.
 */
export type AcquireReply =
  | { readonly granted: true; readonly fence: number }
  | {
      readonly granted: false;
      readonly pttl: number;
      readonly done?: true;
      /** The holder's place when the node placed it (a pass compares it with ours). */
      readonly ahead?: number;
      /** A hand-over's refusal: the key went to an earlier waiter of the queue instead. */
      readonly handed?: true;
    };

/** Extend / release reply: 1 done, 0 expired or absent, -1 held by someone else. */
export type CasReply = 1 | 0 | -1;

/**
 * Inspect reply: `pttl` (-2 absent, -1 no expiry), the fence counter, and what the key holds:
 * a token (or nothing), a done marker, or (from edgelock 0.1's releases) a reservation.
 */
export interface InspectReply {
  readonly pttl: number;
  readonly fence: number;
  readonly kind: "token" | "done" | "reserved";
}

const INSPECT_KINDS = ["token", "done", "reserved"] as const;

const casCode = (reply: unknown): CasReply | undefined =>
  reply === 1 || reply === 0 || reply === -1 ? reply : undefined;

/** See `ACQUIRE_LUA`. */
export const ACQUIRE: Script<AcquireReply, AcquireArgs> = {
  name: "acquire",
  lua: ACQUIRE_LUA,
  sha1: ACQUIRE_SHA1,
  args: ({ token, ttl, fencing, place, queue }) => {
    const args = [token, String(ttl), flag(fencing)];
    if (queue !== undefined) return args.concat(registrationArgs(queue));
    if (place !== undefined) args.push(String(place));
    return args;
  },
  parse(reply) {
    const triple = intArray(reply, 3);
    if (triple === undefined) return undefined;
    const [flag, value, ahead] = triple as [number, number, number];
    if (flag === 1 && value >= 0) return { granted: true, fence: value };
    if (flag === 0 && value >= -2) {
      return ahead >= 0 ? { granted: false, pttl: value, ahead } : { granted: false, pttl: value };
    }
    // The marker exists (the script just read it), so its PTTL is never -2.
    if (flag === 2 && value >= -1) return { granted: false, done: true, pttl: value };
    return undefined;
  },
};

/** EXTEND's arguments (see `EXTEND_LUA`). */
export interface ExtendArgs {
  readonly token: string;
  /** The lease to extend to, in ms (never shortens a node's expiry). */
  readonly ttl: number;
  /** The room's field naming the holder (see `KeyTriple.holder`); absent: `^`. */
  readonly holder?: string | undefined;
}

/** See `EXTEND_LUA`. */
export const EXTEND: Script<CasReply, ExtendArgs> = {
  name: "extend",
  lua: EXTEND_LUA,
  sha1: EXTEND_SHA1,
  args: ({ token, ttl, holder }) =>
    holder === undefined ? [token, String(ttl)] : [token, String(ttl), holder],
  parse: casCode,
};

/**
 * Resume reply: the swap's outcome (as {@link CasReply}), when resumed the fence (0 without), and
 * whether the node holds the ticket's record of failed resumes (a resume of this ticket failed
 * and was undone there: another node's "held" may be that resume's token, its undo still on the
 * way).
 */
export interface ResumeReply {
  readonly cas: CasReply;
  readonly fence: number;
  readonly undone: boolean;
}

/** RESUME's arguments (see `RESUME_LUA`). */
export interface ResumeArgs {
  /** The ticket's token, swapped away. */
  readonly ticketToken: string;
  /** The fresh token that replaces it. */
  readonly token: string;
  /** The lease, in ms (never shortens the ticket's). */
  readonly ttl: number;
  readonly fencing: boolean;
}

/** See `RESUME_LUA`. */
export const RESUME: Script<ResumeReply, ResumeArgs> = {
  name: "resume",
  lua: RESUME_LUA,
  sha1: RESUME_SHA1,
  args: ({ ticketToken, token, ttl, fencing }) => [ticketToken, token, String(ttl), flag(fencing)],
  parse(reply) {
    const triple = intArray(reply, 3);
    if (triple === undefined) return undefined;
    const [code, fence, undone] = triple as [number, number, number];
    const cas = casCode(code);
    return cas !== undefined && fence >= 0 && (undone === 0 || undone === 1)
      ? { cas, fence, undone: undone === 1 }
      : undefined;
  },
};

/** RELEASE's arguments (see `RELEASE_LUA`). */
export interface ReleaseArgs {
  readonly token: string;
  /** The place of the releaser's own next waiter: only waiters of a queue placed before it go first. */
  readonly before?: number | undefined;
  /** A one-shot run's counter lifetime, in ms. */
  readonly counterMs?: number | undefined;
  /** The life of the call's tombstone, in ms (its key follows the triples). */
  readonly keepMs?: number | undefined;
}

/** See `RELEASE_LUA`. */
export const RELEASE: Script<CasReply, ReleaseArgs> = {
  name: "release",
  lua: RELEASE_LUA,
  sha1: RELEASE_SHA1,
  args: ({ token, before, counterMs, keepMs }) => {
    const args = [token];
    // Each later argument keeps its position: "" leaves an earlier one out.
    const rest = [before, counterMs, keepMs];
    const last = rest.findLastIndex((value) => value !== undefined);
    for (let i = 0; i <= last; i++) args.push(rest[i] === undefined ? "" : String(rest[i]));
    return args;
  },
  parse: casCode,
};

/**
 * Fence raise reply: the counter after the raise, and whether the raise `counts` towards the
 * round's majority (the lock key held our token or was absent; see `FENCE_RAISE_LUA`).
 */
export interface RaiseReply {
  readonly counts: boolean;
  readonly counter: number;
}

/** DISCARD's arguments (see `DISCARD_LUA`). */
export interface DiscardArgs {
  /** The failed round's token. */
  readonly token: string;
  /** How long its tombstone lives at least, in ms (the round's TTL). */
  readonly keepMs: number;
  /** A resume's undo: the ticket's token, put back where `token` is. */
  readonly restore?: string | undefined;
}

/** See `DISCARD_LUA`: 1 discarded (or put back), 0 absent everywhere, -1 someone else holds it. */
export const DISCARD: Script<CasReply, DiscardArgs> = {
  name: "discard",
  lua: DISCARD_LUA,
  sha1: DISCARD_SHA1,
  args: ({ token, keepMs, restore }) =>
    restore === undefined ? [token, String(keepMs)] : [token, String(keepMs), restore],
  parse: casCode,
};

/** FENCE_RAISE's arguments (see `FENCE_RAISE_LUA`). */
export interface RaiseArgs {
  /** Every counter is raised to at least this. */
  readonly fence: number;
  /** Ours: the raise counts only where the key holds it (or is absent). */
  readonly token: string;
}

/** See `FENCE_RAISE_LUA`. */
export const FENCE_RAISE: Script<RaiseReply, RaiseArgs> = {
  name: "fence-raise",
  lua: FENCE_RAISE_LUA,
  sha1: FENCE_RAISE_SHA1,
  args: ({ fence, token }) => [String(fence), token],
  parse(reply) {
    const pair = intArray(reply, 2);
    if (pair === undefined) return undefined;
    const [flag, counter] = pair as [number, number];
    return (flag === 0 || flag === 1) && counter >= 0 ? { counts: flag === 1, counter } : undefined;
  },
};

/** See `INSPECT_LUA`. */
export const INSPECT: Script<InspectReply, NoArgs> = {
  name: "inspect",
  lua: INSPECT_LUA,
  sha1: INSPECT_SHA1,
  args: noArgs,
  parse(reply) {
    const triple = intArray(reply, 3);
    if (triple === undefined) return undefined;
    const [pttl, fence, code] = triple as [number, number, number];
    const kind = INSPECT_KINDS[code];
    return pttl >= -2 && fence >= 0 && kind !== undefined ? { pttl, fence, kind } : undefined;
  },
};

/** Complete reply: 1 done marker written, 2 already done, 0 held by someone else (untouched). */
export type CompleteReply = 1 | 2 | 0;

/** COMPLETE's arguments (see `COMPLETE_LUA`). */
export interface CompleteArgs {
  readonly token: string;
  /** How long the done marker stays, in ms. */
  readonly retentionMs: number;
  /** Kept in the marker (printable ASCII: the idempotency layer's stored response). */
  readonly record?: string | undefined;
}

/** See `COMPLETE_LUA`. */
export const COMPLETE: Script<CompleteReply, CompleteArgs> = {
  name: "complete",
  lua: COMPLETE_LUA,
  sha1: COMPLETE_SHA1,
  args: ({ token, retentionMs, record }) =>
    record === undefined ? [token, String(retentionMs)] : [token, String(retentionMs), record],
  parse: (reply) => (reply === 1 || reply === 2 || reply === 0 ? reply : undefined),
};

/**
 * Record reply (see `RECORD_LUA`): the key is absent, held (a token or a reservation, with its
 * pttl), or a done marker with the record kept in it (`""` for none).
 */
export type RecordReply =
  | { readonly kind: "absent" }
  | { readonly kind: "held"; readonly pttl: number }
  | { readonly kind: "done"; readonly pttl: number; readonly record: string };

/** See `RECORD_LUA`. */
export const RECORD: Script<RecordReply, NoArgs> = {
  name: "record",
  lua: RECORD_LUA,
  sha1: RECORD_SHA1,
  args: noArgs,
  parse(reply) {
    if (!Array.isArray(reply) || reply.length !== 3) return undefined;
    const [code, pttl, record] = reply as [unknown, unknown, unknown];
    if (!isInt(pttl) || pttl < -2 || typeof record !== "string") return undefined;
    if (code === 0) return { kind: "absent" };
    if (code === 1) return { kind: "held", pttl };
    if (code === 2) return { kind: "done", pttl, record };
    return undefined;
  },
};

/** See `FORCE_RELEASE_LUA`; the reply is the number of deleted keys. */
export const FORCE_RELEASE: Script<number, NoArgs> = {
  name: "force-release",
  lua: FORCE_RELEASE_LUA,
  sha1: FORCE_RELEASE_SHA1,
  args: noArgs,
  parse: (reply) => (reply === 0 || reply === 1 ? reply : undefined),
};

/**
 * Handover reply: the next holder's acquire (as {@link AcquireReply}) and what happened to our
 * grant (as {@link CasReply}: 1 released, 0 already gone, -1 someone else holds the key).
 */
export interface HandoverReply {
  readonly acquire: AcquireReply;
  readonly released: CasReply;
}

/** HANDOVER's arguments (see `HANDOVER_LUA`). */
export interface HandoverArgs {
  /** Ours, released. */
  readonly token: string;
  /** The next holder's round: its token, lease (ms) and fencing, as ACQUIRE's. */
  readonly next: Omit<AcquireArgs, "queue" | "place">;
  /** The next holder's place: waiters of a queue placed before it go first. */
  readonly place?: number | undefined;
}

/** See `HANDOVER_LUA`. */
export const HANDOVER: Script<HandoverReply, HandoverArgs> = {
  name: "handover",
  lua: HANDOVER_LUA,
  sha1: HANDOVER_SHA1,
  args: ({ token, next, place }) => [
    token,
    next.token,
    String(next.ttl),
    flag(next.fencing),
    place === undefined ? "" : String(place),
  ],
  parse(reply) {
    const triple = intArray(reply, 3);
    if (triple === undefined) return undefined;
    const [flag, value, released] = triple as [number, number, number];
    const handed = flag === 3 && value >= 0;
    const acquire: AcquireReply | undefined = handed
      ? { granted: false, pttl: value, handed: true }
      : ACQUIRE.parse([flag, value, -1]);
    const cas = casCode(released);
    if (acquire === undefined || cas === undefined) return undefined;
    // Only a grant, or a hand-off to an earlier waiter, can go with our release; any other
    // refusal means the key was not ours.
    if (!acquire.granted && !handed && cas !== -1) return undefined;
    return { acquire, released: cas };
  },
};

/** See `LEAVE_LUA`; the reply is 1 when a record was removed, else 0. */
export const LEAVE: Script<number, { readonly token: string }> = {
  name: "leave",
  lua: LEAVE_LUA,
  sha1: LEAVE_SHA1,
  args: ({ token }) => [token],
  parse: (reply) => (reply === 0 || reply === 1 ? reply : undefined),
};

/** PASS's reply: whether the node gave the key up (else it kept it, or did not hold it). */
export interface PassReply {
  readonly passed: boolean;
  readonly pttl: number;
}

/** See `PASS_LUA`. */
export const PASS: Script<
  PassReply,
  { readonly token: string; readonly queue: QueueRegistration }
> = {
  name: "pass",
  lua: PASS_LUA,
  sha1: PASS_SHA1,
  args: ({ token, queue }) => [token, ...registrationArgs(queue)],
  parse(reply) {
    const pair = intArray(reply, 2);
    if (pair === undefined) return undefined;
    const [passed, pttl] = pair as [number, number];
    return (passed === 0 || passed === 1) && pttl >= -2
      ? { passed: passed === 1, pttl }
      : undefined;
  },
};

/** Every script, for the hash tests. */
export const SCRIPTS: readonly Script<unknown, never>[] = [
  ACQUIRE,
  EXTEND,
  RELEASE,
  FENCE_RAISE,
  INSPECT,
  FORCE_RELEASE,
  COMPLETE,
  HANDOVER,
  LEAVE,
  PASS,
  RECORD,
  RESUME,
  DISCARD,
];
