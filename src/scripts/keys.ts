/**
 * The KEYS of a script call, named: one {@link KeyTriple} per lock key, flattened in the order the
 * Lua reads them (`lockKey(i)`, `fenceKey(i)`, `roomKey(i)` in `lua.ts`) only where the request is
 * made, then the tombstone key of the scripts that place or discard a token.
 *
 * @module
 */

/** One lock key as every script takes it: the key, its fence counter and its wait room. */
export interface KeyTriple {
  /** Holds the holder's token, a reservation `wake:…` or a done marker `done:…`. */
  readonly lock: string;
  /** The fence counter (`<lock>:fence`). */
  readonly fence: string;
  /** The wait room (`<lock>:wait`): a sorted set of waiters, and the stem of their channels. */
  readonly room: string;
  /** The room's field naming the key's holder: `^` when absent, `^<j>` for a semaphore's slot j. */
  readonly holder?: string;
}

/**
 * A script call's KEYS: every triple's keys in order, then `tombstone` if given (ACQUIRE,
 * HANDOVER, RESUME and DISCARD read one key after the triples: see `TRIPLES` in `lua.ts`).
 *
 * @example
 * scriptKeys([{ lock: "lock:a", fence: "lock:a:fence", room: "lock:a:wait" }])
 * // ["lock:a", "lock:a:fence", "lock:a:wait"]
 */
export function scriptKeys(triples: readonly KeyTriple[], tombstone?: string): string[] {
  const keys = triples.flatMap((t) => [t.lock, t.fence, t.room]);
  if (tombstone !== undefined) keys.push(tombstone);
  return keys;
}

/**
 * The tombstone key of `token`'s round on a lock (`<first lock key>:void:<token>`): written by
 * DISCARD when the round failed, read by the scripts that would place `token` (docs/SAFETY.md §2,
 * L3). For a resume's undo, `token` is the ticket's: the ticket's record of failed resumes.
 *
 * @example
 * tombstoneKey(triples, "9f2c…") // "lock:a:void:9f2c…"
 */
export function tombstoneKey(triples: readonly KeyTriple[], token: string): string {
  return `${triples[0]?.lock}:void:${token}`;
}

/**
 * The infix of a semaphore's slot keys, `<S>:permit:<j>` (to be refused as lock keys when the
 * semaphore ships: docs/design/semaphore.md §2 "Slots").
 */
export const PERMIT_INFIX = ":permit:";
/** The stem of a semaphore's room and tombstones, `<S>:permits` (to be refused likewise). */
export const PERMITS_SUFFIX = ":permits";
/** The keys of a semaphore on every node (docs/design/semaphore.md §2 "Slots"). */
export interface SemaphoreKeys {
  /**
   * One triple per slot, in slot order: `<S>:permit:<j>`, its fence key `<S>:permit:<j>:fence`
   * (passed to keep the triple's shape, never written in v1) and the one room of every slot.
   */
  readonly slots: readonly KeyTriple[];
  /** The room, `<S>:permits:wait`: waiters' records and each slot's holder `^<j>`. */
  readonly room: string;
  /** The tombstone of a permit call's token, `<S>:permits:void:<token>` (L3). */
  readonly tombstone: (token: string) => string;
}

/**
 * The keys of semaphore `name` with `permits` slots under the manager's `prefix`. Slots are not
 * named by P: instances configured with P = 3 and P = 5 share slots 0–2.
 *
 * @example
 * semaphoreKeys("lock:", "llm", 2).slots[1]
 * // { lock: "lock:llm:permit:1", fence: "lock:llm:permit:1:fence", room: "lock:llm:permits:wait",
 * //   holder: "^1" }
 */
export function semaphoreKeys(prefix: string, name: string, permits: number): SemaphoreKeys {
  const stem = `${prefix}${name}`;
  const room = `${stem}${PERMITS_SUFFIX}:wait`;
  const slots = Array.from({ length: permits }, (_, j) => {
    const lock = `${stem}${PERMIT_INFIX}${j}`;
    return { lock, fence: `${lock}:fence`, room, holder: `^${j}` };
  });
  return { slots, room, tombstone: (token) => `${stem}${PERMITS_SUFFIX}:void:${token}` };
}
