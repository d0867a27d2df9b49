import {
  ACQUIRE_LUA,
  COMPLETE_LUA,
  DISCARD_LUA,
  EXTEND_LUA,
  FENCE_RAISE_LUA,
  FORCE_RELEASE_LUA,
  HANDOVER_LUA,
  INSPECT_LUA,
  LEAVE_LUA,
  RECORD_LUA,
  RELEASE_LUA,
  RESUME_LUA,
} from "./lua";

/**
 * A Lua script with its SHA-1 (lower-case hex of the UTF-8 source) and a reply-shape check.
 * `parse` returns `undefined` for a reply of the wrong shape.
 */
export interface Script<T> {
  readonly name: string;
  readonly lua: string;
  readonly sha1: string;
  readonly parse: (reply: unknown) => T | undefined;
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
      /** Held by a release's reservation for the waiter it woke (wake-up on release). */
      readonly reserved?: true;
    };

/** Extend / release reply: 1 done, 0 expired or absent, -1 held by someone else. */
export type CasReply = 1 | 0 | -1;

/**
 * Inspect reply: `pttl` (-2 absent, -1 no expiry), the fence counter, and what the key holds:
 * a token (or nothing), a done marker, or a reservation for a woken waiter.
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
export const ACQUIRE: Script<AcquireReply> = {
  name: "acquire",
  lua: ACQUIRE_LUA,
  sha1: "3f557af1a6972ef3057afd021558f2e8467818ab",
  parse(reply) {
    const pair = intArray(reply, 2);
    if (pair === undefined) return undefined;
    const [flag, value] = pair as [number, number];
    if (flag === 1 && value >= 0) return { granted: true, fence: value };
    if (flag === 0 && value >= -2) return { granted: false, pttl: value };
    if (flag === 3 && value >= -2) return { granted: false, pttl: value, reserved: true };
    // The marker exists (the script just read it), so its PTTL is never -2.
    if (flag === 2 && value >= -1) return { granted: false, done: true, pttl: value };
    return undefined;
  },
};

/** See `EXTEND_LUA`. */
export const EXTEND: Script<CasReply> = {
  name: "extend",
  lua: EXTEND_LUA,
  sha1: "0d2a0fcbcb96b33314cc156e21ad7775169a47bf",
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

/** See `RESUME_LUA`. */
export const RESUME: Script<ResumeReply> = {
  name: "resume",
  lua: RESUME_LUA,
  sha1: "1c2e0bdd78e0670e0bcf37262f3b8b236a2529ec",
  parse(reply) {
    const triple = Array.isArray(reply) && reply.length === 3 ? reply : undefined;
    const cas = casCode(triple?.[0]);
    const fence = triple?.[1];
    const undone = triple?.[2];
    return cas !== undefined && isInt(fence) && fence >= 0 && (undone === 0 || undone === 1)
      ? { cas, fence, undone: undone === 1 }
      : undefined;
  },
};

/** See `RELEASE_LUA`. */
export const RELEASE: Script<CasReply> = {
  name: "release",
  lua: RELEASE_LUA,
  sha1: "b128a498e743620b7e27f6e162fb6108f6906f5d",
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

/** See `DISCARD_LUA`: 1 discarded (or put back), 0 absent everywhere, -1 someone else holds it. */
export const DISCARD: Script<CasReply> = {
  name: "discard",
  lua: DISCARD_LUA,
  sha1: "f81f3b35b9614647e9c8588e08e57d14bcb9d615",
  parse: casCode,
};

/** See `FENCE_RAISE_LUA`. */
export const FENCE_RAISE: Script<RaiseReply> = {
  name: "fence-raise",
  lua: FENCE_RAISE_LUA,
  sha1: "0ed13167a4bc6f499fa1df38f1327d434fad5934",
  parse(reply) {
    const pair = intArray(reply, 2);
    if (pair === undefined) return undefined;
    const [flag, counter] = pair as [number, number];
    return (flag === 0 || flag === 1) && counter >= 0 ? { counts: flag === 1, counter } : undefined;
  },
};

/** See `INSPECT_LUA`. */
export const INSPECT: Script<InspectReply> = {
  name: "inspect",
  lua: INSPECT_LUA,
  sha1: "2516d1d38344a292ca5e2ea22f82612f1c2525c8",
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

/** See `COMPLETE_LUA`. */
export const COMPLETE: Script<CompleteReply> = {
  name: "complete",
  lua: COMPLETE_LUA,
  sha1: "94c7e871c0c8e0810b79fdcff791eddcca2edc52",
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
export const RECORD: Script<RecordReply> = {
  name: "record",
  lua: RECORD_LUA,
  sha1: "1c463dbb987e35958f35546b0933d88b07317bf9",
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
export const FORCE_RELEASE: Script<number> = {
  name: "force-release",
  lua: FORCE_RELEASE_LUA,
  sha1: "15f7b131c3ed98d7a9cb961cf3e155ac7622c795",
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

/** See `HANDOVER_LUA`. */
export const HANDOVER: Script<HandoverReply> = {
  name: "handover",
  lua: HANDOVER_LUA,
  sha1: "2f7367635237e8ae1095021ddeae5b1745c288e7",
  parse(reply) {
    const triple = intArray(reply, 3);
    if (triple === undefined) return undefined;
    const [flag, value, released] = triple as [number, number, number];
    const acquire = ACQUIRE.parse([flag, value]);
    const cas = casCode(released);
    if (acquire === undefined || cas === undefined) return undefined;
    // Only a grant, or a reservation for an earlier waiter, can go with our release; any other
    // refusal means the key was not ours.
    if (!acquire.granted && acquire.reserved !== true && cas !== -1) return undefined;
    return { acquire, released: cas };
  },
};

/** See `LEAVE_LUA`; the reply is the number of entries removed. */
export const LEAVE: Script<number> = {
  name: "leave",
  lua: LEAVE_LUA,
  sha1: "63fb9205db97f1ec6df2190d6a1bc79b20cbc33d",
  parse: (reply) => (reply === 0 || reply === 1 ? reply : undefined),
};

/** Every script, for the hash tests. */
export const SCRIPTS: readonly Script<unknown>[] = [
  ACQUIRE,
  EXTEND,
  RELEASE,
  FENCE_RAISE,
  INSPECT,
  FORCE_RELEASE,
  COMPLETE,
  HANDOVER,
  LEAVE,
  RECORD,
  RESUME,
  DISCARD,
];
