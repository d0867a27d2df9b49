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
}

/** The weathers of the workload. */
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

const pick = (random: Random, [min, max]: readonly [number, number]) => random.int(min, max);

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
