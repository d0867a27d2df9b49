import type { Budget } from "../budget";
import { ConfigurationError, checkKnown, isPlainObject, shown } from "../errors";
import type { RestNode } from "../node";
import { createNode } from "../node";
import { bestValidity, quorumOf } from "../quorum";
import type { AcquireOptions, LockEvent, LocksOptions } from "./types";

/**
 * Defaults of {@link LocksOptions} (frozen). `requestTimeout` has no constant default: it is
 * derived per round from the grant's TTL (the lease, or less when a budget shortens it):
 * `max(250, round(ttl × 0.05))`, at most `⌊ttl / 3⌋`.
 *
 * @example
 * createLocks({ nodes, lease: DEFAULTS.lease * 3 });
 */
export const DEFAULTS = Object.freeze({
  /** @default "lock:" */
  prefix: "lock:",
  /** @default 10000 */
  lease: 10_000,
  /** @default false */
  fencing: false,
  /** @default 0.01 */
  driftFactor: 0.01,
  /** @default 10 */
  minValidity: 10,
  /** @default 0 */
  wait: 0,
  /**
   * `using()`'s wait when neither the call nor `createLocks` sets one: it runs a job that should
   * happen, so it retries as redlock (≈ 10 × 200–400 ms) and redsync (32 × 50–250 ms) do.
   * @default 5000
   */
  usingWait: 5_000,
  /** @default 50 */
  retryDelay: 50,
  /** @default 1000 */
  retryDelayMax: 1_000,
  /** @default false */
  wake: false,
});

/** Longest accepted `prefix`, in UTF-8 bytes. */
export const MAX_PREFIX_BYTES = 256;
/** {@link LocksOptions} after validation, with the nodes built. */
export interface ResolvedOptions {
  readonly nodes: readonly RestNode[];
  readonly quorum: number;
  readonly prefix: string;
  readonly lease: number;
  readonly fencing: boolean;
  readonly driftFactor: number;
  readonly minValidity: number;
  readonly requestTimeout: number | undefined;
  readonly wait: number;
  /** `using()`'s default wait: `wait` when `createLocks` was given one, else `usingWait`. */
  readonly usingWait: number;
  readonly retryDelay: number;
  readonly retryDelayMax: number;
  readonly wake: boolean;
  readonly onEvent: ((event: LockEvent) => void) | undefined;
}

const KNOWN = new Set<string>([
  "nodes",
  "prefix",
  "lease",
  "fencing",
  "driftFactor",
  "minValidity",
  "requestTimeout",
  "wait",
  "retryDelay",
  "retryDelayMax",
  "wake",
  "onEvent",
]);

const bytes = (s: string): number => new TextEncoder().encode(s).length;

function positiveInt(option: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigurationError(option, `expected a positive integer (ms), got ${shown(value)}`);
  }
  return value;
}

/** Longest lease: timers (validity, auto-extension) cannot be armed further out than 2^31−1 ms. */
export const MAX_LEASE = 2_147_483_647;

/**
 * A lease (ms): a positive integer up to {@link MAX_LEASE}, for `createLocks`, each call,
 * `lock.extend()` and `lock.ticket()` alike.
 *
 * @throws {ConfigurationError} `lease`
 * @example
 * checkLease(30_000); // 30000
 */
export function checkLease(value: unknown): number {
  const ms = positiveInt("lease", value);
  if (ms > MAX_LEASE) throw new ConfigurationError("lease", `longer than ${MAX_LEASE} ms`);
  return ms;
}

/**
 * `lease`, refused when no grant of it could reach `minValidity` (the drift and the round's
 * margin eat it): one rule for `createLocks`, each call and `lock.extend(lease)`.
 *
 * @throws {ConfigurationError} `lease`
 * @example
 * checkReach(10_000, 0.01, 10); // 10000
 */
export function checkReach(lease: number, driftFactor: number, minValidity: number): number {
  if (bestValidity(lease, driftFactor) < Math.max(1, minValidity)) {
    throw new ConfigurationError("lease", "too short: no grant could reach minValidity");
  }
  return lease;
}

function boolean(option: string, value: unknown): boolean {
  if (typeof value !== "boolean") {
    throw new ConfigurationError(option, `expected a boolean, got ${shown(value)}`);
  }
  return value;
}

function nonNegativeInt(option: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new ConfigurationError(option, `expected an integer >= 0 (ms), got ${shown(value)}`);
  }
  return value;
}

function buildNodes(nodes: unknown): RestNode[] {
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw new ConfigurationError("nodes", "expected a non-empty array of nodes");
  }
  const seenUrls = new Map<string, number>();
  const seenObjects = new Map<unknown, number>();
  return nodes.map((input: unknown, index) => {
    const earlierObject = seenObjects.get(input);
    if (earlierObject !== undefined) {
      throw new ConfigurationError(
        `nodes[${index}]`,
        `the same node as nodes[${earlierObject}]; quorum nodes must be independent`,
      );
    }
    seenObjects.set(input, index);
    const { node, url } = createNode(input, index);
    if (url !== undefined) {
      const earlier = seenUrls.get(url);
      if (earlier !== undefined) {
        throw new ConfigurationError(
          `nodes[${index}]`,
          `same URL as nodes[${earlier}] (${node.host}); quorum nodes must be independent`,
        );
      }
      seenUrls.set(url, index);
    }
    return node;
  });
}

/**
 * Validate {@link LocksOptions} and build the nodes.
 *
 * @throws {ConfigurationError} naming the option (`nodes[2]`, `lease`, `driftFactor`, ...)
 * @example
 * const resolved = resolveOptions({ nodes: [{ url, token }], lease: 5_000 });
 */
export function resolveOptions(options: LocksOptions): ResolvedOptions {
  if (typeof options !== "object" || options === null) {
    throw new ConfigurationError("options", "expected an object with at least `nodes`");
  }
  // An array or a Map is refused as `options`, not read as "no nodes".
  checkKnown(options, KNOWN, "createLocks()");
  const prefix = options.prefix ?? DEFAULTS.prefix;
  if (typeof prefix !== "string" || prefix.length === 0) {
    throw new ConfigurationError("prefix", "expected a non-empty string");
  }
  if (bytes(prefix) > MAX_PREFIX_BYTES) {
    throw new ConfigurationError("prefix", `longer than ${MAX_PREFIX_BYTES} bytes`);
  }
  const leaseMs = checkLease(options.lease ?? DEFAULTS.lease);
  const fencing = boolean("fencing", options.fencing ?? DEFAULTS.fencing);
  const wake = boolean("wake", options.wake ?? DEFAULTS.wake);
  const driftFactor = options.driftFactor ?? DEFAULTS.driftFactor;
  if (typeof driftFactor !== "number" || !(driftFactor >= 0 && driftFactor < 0.5)) {
    throw new ConfigurationError(
      "driftFactor",
      `expected a number in [0, 0.5), got ${shown(driftFactor)}`,
    );
  }
  const minValidity = nonNegativeInt("minValidity", options.minValidity ?? DEFAULTS.minValidity);
  checkReach(leaseMs, driftFactor, minValidity);
  const requestTimeout =
    options.requestTimeout === undefined
      ? undefined
      : positiveInt("requestTimeout", options.requestTimeout);
  const wait = nonNegativeInt("wait", options.wait ?? DEFAULTS.wait);
  const usingWait = options.wait === undefined ? DEFAULTS.usingWait : wait;
  const retryDelay = positiveInt("retryDelay", options.retryDelay ?? DEFAULTS.retryDelay);
  const retryDelayMax = positiveInt(
    "retryDelayMax",
    options.retryDelayMax ?? DEFAULTS.retryDelayMax,
  );
  if (retryDelayMax < retryDelay) {
    throw new ConfigurationError("retryDelayMax", "must be >= retryDelay");
  }
  const { onEvent } = options;
  if (onEvent !== undefined && typeof onEvent !== "function") {
    throw new ConfigurationError("onEvent", "expected a function");
  }
  const nodes = buildNodes(options.nodes);
  return {
    nodes,
    quorum: quorumOf(nodes.length),
    prefix,
    lease: leaseMs,
    fencing,
    driftFactor,
    minValidity,
    requestTimeout,
    wait,
    usingWait,
    retryDelay,
    retryDelayMax,
    wake,
    onEvent,
  };
}

/** Per-call options after validation and defaults. */
export interface ResolvedCall {
  readonly lease: number;
  readonly wait: number;
  readonly signal: AbortSignal | undefined;
  readonly budget: Budget | undefined;
  readonly autoExtend: boolean;
}

function isBudget(value: unknown): value is Budget {
  const b = value as Partial<Record<keyof Budget, unknown>> | null;
  return (
    typeof b === "object" &&
    b !== null &&
    typeof b.remaining === "function" &&
    typeof b.remainingSubrequests === "function" &&
    typeof b.charge === "function" &&
    typeof b.ttl === "function"
  );
}

function isSignal(value: unknown): value is AbortSignal {
  const s = value as Partial<AbortSignal> | null;
  return (
    typeof s === "object" &&
    s !== null &&
    typeof s.aborted === "boolean" &&
    typeof s.addEventListener === "function"
  );
}

const CALL_OPTIONS = new Set(["lease", "wait", "signal", "budget", "autoExtend"]);

/**
 * Validate the options of one `acquire` / `tryAcquire` / `using` call.
 *
 * @throws {ConfigurationError} naming the option (`lease`, `wait`, `signal`, `budget`, `autoExtend`)
 */
export function resolveCall(
  resolved: ResolvedOptions,
  options: AcquireOptions | undefined,
  autoExtendDefault: boolean,
  waitDefault: number = resolved.wait,
): ResolvedCall {
  // Only `undefined` means "no options": `null`, a number, an array or a Map is a mistake, and a
  // typo (`wiat`) must not silently turn into "no wait".
  const o = options === undefined ? {} : options;
  checkKnown(o, CALL_OPTIONS, "acquire(), tryAcquire() and using()");
  const { driftFactor, minValidity } = resolved;
  const leaseMs = checkReach(checkLease(o.lease ?? resolved.lease), driftFactor, minValidity);
  const wait = nonNegativeInt("wait", o.wait ?? waitDefault);
  if (o.signal !== undefined && !isSignal(o.signal)) {
    throw new ConfigurationError("signal", "expected an AbortSignal");
  }
  if (o.budget !== undefined && !isBudget(o.budget)) {
    throw new ConfigurationError("budget", "expected a Budget from the `budget` factories");
  }
  const autoExtend = boolean("autoExtend", o.autoExtend ?? autoExtendDefault);
  return { lease: leaseMs, wait, signal: o.signal, budget: o.budget, autoExtend };
}

/**
 * The options of a `tryAcquire()` call, which looks once: `wait` set to 0. A `wait` other than 0
 * is refused rather than dropped (a caller who passed it expects a wait). Anything but a plain
 * object goes through as is, for {@link resolveCall} to name it.
 *
 * @throws {ConfigurationError} `wait` given and not 0
 * @example
 * return await acquire(key, lookOnce(options)); // { wait: 5_000 } → ConfigurationError `wait`
 */
export function lookOnce(options: unknown): unknown {
  if (options === undefined) return { wait: 0 };
  if (!isPlainObject(options)) return options;
  const { wait } = options as { wait?: unknown };
  // `null` is "not set" here as in acquire() (`wait ?? default`).
  if (wait != null && wait !== 0) {
    throw new ConfigurationError("wait", "tryAcquire() never waits: use acquire()");
  }
  return { ...options, wait: 0 };
}

/**
 * When a call that began at `began` (`performance.now()`) stops waiting: `wait` ms later, and
 * never past where its budget keeps only `reserve` (README "Execution budget": waiting never eats
 * into `reserve`) less `answerMs`, what giving up may still take (the last look's pending nodes,
 * one request timeout), so that the caller answers before its deadline even with no `reserve`.
 * Every way of waiting reads it: the local line, the nodes' queues, polling, a permit's wait, an
 * Idempotency-Key duplicate's. A call already there still makes its first look (the budget
 * decides whether a round fits), and gives up after it.
 *
 * @example
 * const waitUntil = waitEnd(call, performance.now(), core.timeoutFor(call.lease));
 */
export function waitEnd(
  call: Pick<ResolvedCall, "wait" | "budget">,
  began: number,
  answerMs = 0,
): number {
  const { budget } = call;
  const until = began + call.wait;
  return budget === undefined
    ? until
    : Math.min(until, budget.deadline - budget.reserve - answerMs);
}
