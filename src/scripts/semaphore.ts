/**
 * The semaphore's scripts as the library sends them (docs/design/semaphore.md §2 "One round picks one slot", §3 "What changes in the Lua"):
 * shipped texts (`semaphore-shipped.ts`), SHA-1s, argument builders and reply checks. Apart from
 * `SCRIPTS` (the lock's): an app that only locks never bundles them, and they are not yet
 * reachable from the API (build step 1 of the design).
 *
 * @module
 */
import type { QueueRegistration, Script } from "./scripts";
import {
  DISCARD_SLOTS_LUA,
  DISCARD_SLOTS_SHA1,
  RELEASE_SLOTS_LUA,
  RELEASE_SLOTS_SHA1,
  SEM_ACQUIRE_LUA,
  SEM_ACQUIRE_SHA1,
  SEM_INSPECT_LUA,
  SEM_INSPECT_SHA1,
  SEM_PASS_LUA,
  SEM_PASS_SHA1,
} from "./semaphore-shipped";

const isInt = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value);

const ints = (reply: unknown): number[] | undefined =>
  Array.isArray(reply) && reply.every(isInt) ? (reply as number[]) : undefined;

/** The triples' slot indices as the slot scripts read them (one ARGV, comma-separated). */
const slotList = (slots: readonly number[]): string => slots.join(",");

/** A registration as ARGV, as the lock's (`place` first), for SEM_ACQUIRE and SEM_PASS. */
function registrationArgs(queue: QueueRegistration): string[] {
  const { place, look, listener, waitMs, handMs, roomMs, fencing } = queue;
  return [place, look, listener, waitMs, handMs, roomMs].map(String).concat(fencing ? "1" : "0");
}

/** SEM_ACQUIRE's arguments (see `SEM_ACQUIRE_LUA`). */
export interface SemAcquireArgs {
  /** The call's token (one for all its looks). */
  readonly token: string;
  /** The lease, in ms. */
  readonly ttl: number;
  /** The slot index of each triple, in the call's order (the order of the KEYS). */
  readonly slots: readonly number[];
  /** The leading triples where the token may be placed (P, or 1 for a consolidating look). */
  readonly eligible: number;
  /** The slot the call prefers while `preferMs` lasts (registered with its record). */
  readonly prefer?: number | undefined;
  /** How much longer the preference lasts, in ms. */
  readonly preferMs?: number | undefined;
  /** The caller's place (epoch ms of its call); `undefined`: after every waiter. */
  readonly place?: number | undefined;
  /** A waiting call's registration, recorded in the room while it is refused. */
  readonly queue?: QueueRegistration | undefined;
}

/**
 * SEM_ACQUIRE's reply: a slot (found or placed), a refusal (`ahead`: the place of an earlier
 * holder of the first eligible slot; `pttls`: every slot's PTTL in slot order, -2 free), or the
 * call's tombstone (`ended`, with its PTTL).
 */
export type SemAcquireReply =
  | { readonly granted: true; readonly slot: number }
  | {
      readonly granted: false;
      readonly ahead?: number;
      readonly pttls: readonly number[];
    }
  | { readonly granted: false; readonly ended: true; readonly pttl: number };

/** See `SEM_ACQUIRE_LUA`. */
export const SEM_ACQUIRE: Script<SemAcquireReply, SemAcquireArgs> = {
  name: "semaphore-acquire",
  lua: SEM_ACQUIRE_LUA,
  sha1: SEM_ACQUIRE_SHA1,
  args: ({ token, ttl, slots, eligible, prefer, preferMs, place, queue }) => {
    const args = [
      token,
      String(ttl),
      "0",
      String(eligible),
      slotList(slots),
      prefer === undefined ? "" : String(prefer),
      String(preferMs ?? 0),
    ];
    if (queue !== undefined) return args.concat(registrationArgs(queue));
    if (place !== undefined) args.push(String(place));
    return args;
  },
  parse(reply) {
    const r = ints(reply);
    if (r === undefined) return undefined;
    const [flag, value] = r as [number, number];
    if (r.length === 2 && flag === 1 && value >= 0) return { granted: true, slot: value };
    if (r.length === 2 && flag === 3 && value >= -1) {
      return { granted: false, ended: true, pttl: value };
    }
    const pttls = r.slice(2);
    if (flag !== 0 || pttls.length === 0 || value < -1 || pttls.some((p) => p < -2)) {
      return undefined;
    }
    return value >= 0 ? { granted: false, ahead: value, pttls } : { granted: false, pttls };
  },
};

/** SEM_PASS's arguments (see `SEM_PASS_LUA`). */
export interface SemPassArgs {
  readonly token: string;
  /** The slot index of each triple, in the call's order. */
  readonly slots: readonly number[];
  /** The slot kept, then preferred; `undefined`: pass every slot, prefer none. */
  readonly keep?: number | undefined;
  /** How long the preference lasts, in ms. */
  readonly preferMs?: number | undefined;
  /** The call's registration, under the pass's own look number. */
  readonly queue: QueueRegistration;
}

/** SEM_PASS's reply: whether a slot was freed, and the slot the token is on after it (-1 none). */
export interface SemPassReply {
  readonly passed: boolean;
  readonly slot: number;
}

/** See `SEM_PASS_LUA`. */
export const SEM_PASS: Script<SemPassReply, SemPassArgs> = {
  name: "semaphore-pass",
  lua: SEM_PASS_LUA,
  sha1: SEM_PASS_SHA1,
  args: ({ token, slots, keep, preferMs, queue }) => [
    token,
    slotList(slots),
    keep === undefined ? "" : String(keep),
    String(preferMs ?? 0),
    ...registrationArgs(queue),
  ],
  parse(reply) {
    const r = ints(reply);
    if (r?.length !== 2) return undefined;
    const [passed, slot] = r as [number, number];
    return (passed === 0 || passed === 1) && slot >= -1
      ? { passed: passed === 1, slot }
      : undefined;
  },
};

/** RELEASE_SLOTS's and DISCARD_SLOTS's arguments. */
export interface SlotsEndArgs {
  readonly token: string;
  /** The slot index of each triple given. */
  readonly slots: readonly number[];
  /** The life of the call's tombstone, in ms (its key follows the triples). */
  readonly keepMs: number;
}

const endArgs = ({ token, slots, keepMs }: SlotsEndArgs): string[] => [
  token,
  slotList(slots),
  String(keepMs),
];
const oneOrZero = (reply: unknown): 1 | 0 | undefined =>
  reply === 1 || reply === 0 ? reply : undefined;

/** See `RELEASE_SLOTS_LUA`: 1 a slot held the token (or a re-send handed it on), else 0. */
export const RELEASE_SLOTS: Script<1 | 0, SlotsEndArgs> = {
  name: "semaphore-release",
  lua: RELEASE_SLOTS_LUA,
  sha1: RELEASE_SLOTS_SHA1,
  args: endArgs,
  parse: oneOrZero,
};

/** See `DISCARD_SLOTS_LUA`: 1 a slot held the token, else 0. */
export const DISCARD_SLOTS: Script<1 | 0, SlotsEndArgs> = {
  name: "semaphore-discard",
  lua: DISCARD_SLOTS_LUA,
  sha1: DISCARD_SLOTS_SHA1,
  args: endArgs,
  parse: oneOrZero,
};

/** See `SEM_INSPECT_LUA`: each slot's PTTL in the order of the triples given (-2 free). */
export const SEM_INSPECT: Script<readonly number[], Readonly<Record<string, never>>> = {
  name: "semaphore-inspect",
  lua: SEM_INSPECT_LUA,
  sha1: SEM_INSPECT_SHA1,
  args: () => [],
  parse(reply) {
    const r = ints(reply);
    return r !== undefined && r.length > 0 && r.every((p) => p >= -2) ? r : undefined;
  },
};

/** Every semaphore script, for the hash and parity tests. */
export const SEMAPHORE_SCRIPTS: readonly Script<unknown, never>[] = [
  SEM_ACQUIRE,
  SEM_PASS,
  RELEASE_SLOTS,
  DISCARD_SLOTS,
  SEM_INSPECT,
];
