/**
 * What can happen to a request, a reply or a wake-up message, per weather (see the workload's
 * `Weather`), drawn from the link's own random stream. Every fault is one the real network and
 * REST endpoints produce: delays, a request lost before the node (a broken connection: an error,
 * or silence until the client's timeout), a reply lost after the script ran (an error — the
 * client re-sends — or silence), an execution long after the client gave up, a server error.
 *
 * @module
 */

import type { Random } from "./random";

/** Fault probabilities and delay ranges (ms of virtual time). */
export interface Weather {
  /** Delay of a request to the node, and of a reply back (uniform in [min, max]). */
  readonly delay: readonly [number, number];
  /** A longer delay that still fits a request timeout, with this probability. */
  readonly slow: number;
  readonly slowDelay: readonly [number, number];
  /** A delay this long instead (execution after the client's timeout), with this probability. */
  readonly late: number;
  readonly lateDelay: readonly [number, number];
  /** Lost before the node: with an error (connection reset) half the time, else silence. */
  readonly lostRequest: number;
  /** Ran, but the reply is lost: with an error (reset after) half the time, else silence. */
  readonly lostReply: number;
  /** The node answers with an error (HTTP 5xx). */
  readonly serverError: number;
  /** A wake-up message is lost, or a stream fails to open. */
  readonly lostMessage: number;
  /**
   * An open stream drops (stops delivering) at a uniform time within `streamLife` ms of opening
   * (default 0: streams last until unsubscribed or their node goes down).
   */
  readonly streamDrop?: number;
  readonly streamLife?: readonly [number, number];
  /**
   * A dropped stream, or one whose node went down, tells its subscriber with an `error` (as a
   * reset connection does) with this probability; else it falls silent (a half-open connection,
   * or a Workers stream that ended with its request). Default 0: always silent.
   */
  readonly dropNotice?: number;
  /**
   * A message a stream delivers is delivered again (a duplicate, `delay` later) with this
   * probability, and delivered `lateMessageDelay` ms late (past a hand-off's TTL) with
   * `lateMessage`: drawn per delivery from the stream's own message stream (docs/SAFETY.md §6
   * "Hand-off messages are hints"). Default 0.
   */
  readonly duplicateMessage?: number;
  readonly lateMessage?: number;
  readonly lateMessageDelay?: readonly [number, number];
}

/**
 * The weathers of the workload: `calm` has no fault at all, `faulty` some of each, `harsh` many.
 * The first fields of `faulty` and `harsh` are what the named regression schedules were found
 * with: changing them (or the order of draws in {@link drawFate}) re-seeds those schedules.
 */
export const WEATHERS = {
  calm: {
    delay: [0, 3],
    slow: 0,
    slowDelay: [0, 0],
    late: 0,
    lateDelay: [0, 0],
    lostRequest: 0,
    lostReply: 0,
    serverError: 0,
    lostMessage: 0,
  },
  faulty: {
    delay: [0, 8],
    slow: 0.08,
    slowDelay: [20, 150],
    late: 0.03,
    lateDelay: [100, 600],
    lostRequest: 0.02,
    lostReply: 0.03,
    serverError: 0.01,
    lostMessage: 0.1,
    streamDrop: 0.05,
    streamLife: [50, 5_000],
    dropNotice: 0.5,
    duplicateMessage: 0.05,
    lateMessage: 0.03,
    lateMessageDelay: [1_000, 3_000],
  },
  harsh: {
    delay: [0, 40],
    slow: 0.15,
    slowDelay: [20, 200],
    late: 0.12,
    lateDelay: [100, 1_500],
    lostRequest: 0.06,
    lostReply: 0.08,
    serverError: 0.04,
    lostMessage: 0.3,
    streamDrop: 0.2,
    streamLife: [20, 3_000],
    dropNotice: 0.5,
    duplicateMessage: 0.15,
    lateMessage: 0.1,
    lateMessageDelay: [1_000, 3_000],
  },
} as const satisfies Record<string, Weather>;

/** One request's fate. */
export interface Fate {
  readonly toNode: number;
  readonly back: number;
  /** "lost": never reaches the node; "unheard": runs, no reply; "error": the node errs. */
  readonly outcome: "ok" | "lost" | "unheard" | "error";
  /** For lost/unheard: the client sees a connection error (else silence until its timeout). */
  readonly reset: boolean;
}

const pick = (random: Random, range: readonly [number, number]) => random.between(range);

/**
 * Draw one request's fate.
 *
 * @example
 * const fate = drawFate(link.random, WEATHERS.faulty);
 */
export function drawFate(random: Random, weather: Weather): Fate {
  const late = random.chance(weather.late);
  const slow = random.chance(weather.slow);
  const toNode = late
    ? pick(random, weather.lateDelay)
    : slow
      ? pick(random, weather.slowDelay)
      : pick(random, weather.delay);
  const back = pick(random, weather.delay);
  const roll = random.next();
  const reset = random.chance(0.5);
  let outcome: Fate["outcome"] = "ok";
  if (roll < weather.lostRequest) outcome = "lost";
  else if (roll < weather.lostRequest + weather.lostReply) outcome = "unheard";
  else if (roll < weather.lostRequest + weather.lostReply + weather.serverError) outcome = "error";
  return { toNode, back, outcome, reset };
}

/** When an open stream drops (ms after it opened) and whether its subscriber hears of it. */
export interface StreamFate {
  /** `undefined`: it lasts. */
  readonly dropAfter: number | undefined;
  /** The drop (or its node going down) is reported with an `error` event. */
  readonly notice: boolean;
}

/**
 * Draw an open stream's fate, from a stream of its own (so it shifts no request fate).
 *
 * @example
 * const fate = drawStreamFate(random.split(`stream:${client}:${node}`), WEATHERS.harsh);
 */
export function drawStreamFate(random: Random, weather: Weather): StreamFate {
  const drops = random.chance(weather.streamDrop ?? 0);
  const life = random.between(weather.streamLife ?? [0, 0]);
  const notice = random.chance(weather.dropNotice ?? 0);
  return { dropAfter: drops ? life : undefined, notice };
}

/** What happens to one message a stream delivers: `late` ms late, and a duplicate `again` later. */
export interface MessageFate {
  readonly late: number;
  /** `undefined`: delivered once. */
  readonly again: number | undefined;
}

/**
 * Draw a delivered message's fate, from the stream's message stream (so it shifts no request's
 * or stream's fate).
 *
 * @example
 * const fate = drawMessageFate(random.split(`messages:${client}:${node}`), WEATHERS.harsh);
 */
export function drawMessageFate(random: Random, weather: Weather): MessageFate {
  const late = random.chance(weather.lateMessage ?? 0);
  const lateBy = random.between(weather.lateMessageDelay ?? [0, 0]);
  const twice = random.chance(weather.duplicateMessage ?? 0);
  const again = random.between(weather.delay);
  return { late: late ? lateBy : 0, again: twice ? again : undefined };
}
