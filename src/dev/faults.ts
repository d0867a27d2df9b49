/**
 * Fault injection for one node: validating faults, keeping them in FIFO order, picking the first one
 * that matches a request and counting it down. Deterministic: latency ranges draw from a seeded
 * PRNG per node, so a run with the same seed and the same request order sees the same delays.
 *
 * @module
 */

import { DevClusterError } from "./errors";
import type { ParsedCommand } from "./request";
import type { Fault } from "./types";

/** Redis's exact text for an unknown script SHA; `@upstash/redis`'s tests assert it verbatim. */
export const NOSCRIPT_MESSAGE = "NOSCRIPT No matching script. Please use EVAL.";

const KINDS = new Set(["latency", "status", "hang", "reset-before", "reset-after", "noscript"]);
const EVALSHA = new Set(["evalsha", "evalsha_ro"]);

/** Whether a command is answered by a `noscript` fault. */
export const isEvalsha = (command: ParsedCommand): boolean => EVALSHA.has(command.lower);

function invalid(what: string): never {
  throw new DevClusterError(`invalid fault: ${what}`);
}

const isDuration = (v: unknown): v is number =>
  typeof v === "number" && Number.isFinite(v) && v >= 0;

/** The fields of each kind of fault beside `kind`, `command` and `count`. */
const FIELDS: Record<Fault["kind"], readonly string[]> = {
  latency: ["ms"],
  status: ["status", "body"],
  hang: [],
  "reset-before": [],
  "reset-after": [],
  noscript: [],
};

/** Checks a fault coming from code or from the admin route; throws {@link DevClusterError}. */
export function validateFault(value: unknown): Fault {
  if (typeof value !== "object" || value === null) invalid("expected an object");
  const fault = value as Record<string, unknown>;
  if (typeof fault.kind !== "string" || !KINDS.has(fault.kind)) {
    invalid(`"kind" must be one of ${[...KINDS].join(", ")}`);
  }
  const fields = FIELDS[fault.kind as Fault["kind"]];
  for (const key of Reflect.ownKeys(fault)) {
    const name = String(key);
    const known = ["kind", "command", "count", ...fields].includes(name);
    if (typeof key === "symbol" || !known) {
      invalid(`unknown field "${name}" of a "${fault.kind}" fault`);
    }
  }
  if (fault.command !== undefined && (typeof fault.command !== "string" || fault.command === "")) {
    invalid(`"command" must be a non-empty string`);
  }
  if (
    fault.count !== undefined &&
    !(Number.isSafeInteger(fault.count) && Number(fault.count) > 0)
  ) {
    invalid(`"count" must be a positive integer`);
  }
  if (fault.kind === "latency") {
    const ms = fault.ms;
    const range =
      Array.isArray(ms) &&
      ms.length === 2 &&
      isDuration(ms[0]) &&
      isDuration(ms[1]) &&
      ms[0] <= ms[1];
    if (!isDuration(ms) && !range)
      invalid(`"ms" must be a duration >= 0 or [min, max] with min <= max`);
  }
  if (fault.kind === "status") {
    const status = fault.status;
    if (!(Number.isInteger(status) && Number(status) >= 200 && Number(status) <= 599)) {
      invalid(`"status" must be an integer HTTP status between 200 and 599`);
    }
    if (fault.body !== undefined && typeof fault.body !== "string")
      invalid(`"body" must be a string`);
  }
  return fault as unknown as Fault;
}

/** mulberry32: tiny, fast, good enough to spread delays; deterministic per seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface ActiveFault {
  readonly fault: Fault;
  readonly command: string | undefined;
  remaining: number | undefined;
}

/** The faults of one node, in injection order. */
export class FaultSet {
  readonly #active: ActiveFault[] = [];
  readonly #random: () => number;

  constructor(seed: number) {
    this.#random = prng(seed);
  }

  /** Validates and appends a fault. */
  add(value: unknown): void {
    // A copy: the caller may reuse or mutate its object after injecting it.
    const fault = { ...validateFault(value) };
    this.#active.push({ fault, command: fault.command?.toLowerCase(), remaining: fault.count });
  }

  /** Removes every fault. */
  clear(): void {
    this.#active.length = 0;
  }

  /** The active faults with what is left of their counts (`count` absent: until cleared). */
  list(): Fault[] {
    return this.#active.map(({ fault, remaining }) =>
      remaining === undefined ? fault : { ...fault, count: remaining },
    );
  }

  /** Takes the first fault matching the request's commands, counting it down; none → undefined. */
  take(commands: readonly ParsedCommand[]): Fault | undefined {
    if (this.#active.length === 0) return undefined;
    const index = this.#active.findIndex((active) => matches(active, commands));
    const active = this.#active[index];
    if (active === undefined) return undefined;
    if (active.remaining !== undefined && --active.remaining <= 0) this.#active.splice(index, 1);
    return active.fault;
  }

  /** The delay of a latency fault: fixed, or drawn uniformly from `[min, max]`. */
  delayOf(ms: number | readonly [number, number]): number {
    if (typeof ms === "number") return ms;
    const [min, max] = ms;
    return min + this.#random() * (max - min);
  }
}

function matches(active: ActiveFault, commands: readonly ParsedCommand[]): boolean {
  if (active.command !== undefined) return commands.some((c) => c.lower === active.command);
  // A noscript fault with no command means "the next EVALSHAs": other requests don't consume it.
  if (active.fault.kind === "noscript") return commands.some(isEvalsha);
  return true;
}
