import type { LambdaContextLike } from "../../budget";
import type { Lock, Locks } from "../../lock";
import type { LambdaContext } from "./types";

/**
 * What a deduplicated handler returns for a skipped invocation (instead of running the job).
 *
 * @example
 * { skipped: true, reason: "done", retryAfter: 86_123_456 }
 */
export interface ScheduledSkipped {
  readonly skipped: true;
  /** `"done"`: this occurrence already ran; `"running"`: another invocation runs it now. */
  readonly reason: "done" | "running";
  /** Remaining retention of the done marker, or of the running holder's lock, in ms. */
  readonly retryAfter: number;
}

/**
 * Options of `dedupeScheduled` (Lambda). Validated when the handler is wrapped
 * (`ConfigurationError` names the option). The budget is `budget.lambda(context, { margin,
 * reserve })`.
 *
 * @example
 * const options: DedupeScheduledOptions<ScheduledEvent> = { locks: getLocks, lease: 60_000 };
 */
export interface DedupeScheduledOptions<
  TEvent,
  TContext extends LambdaContextLike = LambdaContext,
> {
  /**
   * The lock manager, or a function returning it (called per invocation; cache the manager in
   * module scope).
   */
  readonly locks: Locks | ((event: TEvent, context: TContext) => Locks | Promise<Locks>);
  /**
   * The dedupe key of one invocation (without the manager's prefix). Default: the invoked function
   * (`context.invokedFunctionArn`) and the occurrence, see `scheduledKey` (EventBridge rule: rule
   * ARN + `time`; Scheduler input: `scheduleArn` + `scheduledTime`); an event of neither shape
   * then fails with `ConfigurationError` `key`. A key of your own must name the job: a key two
   * jobs share runs only one of them per occurrence.
   */
  readonly key?: (event: TEvent, context: TContext) => string | Promise<string>;
  /** How long a finished run's done marker is kept, in ms. @default 86400000 (24 h) */
  readonly retention?: number;
  /** Lease in ms of the lock held while the job runs (auto-extended). @default the `createLocks` lease */
  readonly lease?: number;
  /** Budget margin in ms added to the remaining time when sizing the TTL. @default 1000 */
  readonly margin?: number;
  /** Time in ms the job needs: an invocation with less left fails before calling any node. @default 0 */
  readonly reserve?: number;
  /**
   * Called when the invocation is skipped, before it returns (logging, metrics); `key` is the
   * dedupe key without the manager's prefix. Its errors propagate.
   * @default one `console.info` line naming the key and why (`edgelock: skipped scheduled job …`)
   */
  readonly onSkip?: (
    skip: {
      readonly key: string;
      readonly reason: "done" | "running";
      readonly retryAfter: number;
    },
    event: TEvent,
    context: TContext,
  ) => void | Promise<void>;
}

/**
 * The job `dedupeScheduled` wraps: an async Lambda handler that also receives the held lock.
 *
 * @example
 * const job: ScheduledJob<ScheduledEvent, number> = async (event, context, lock) => rebuild(lock.signal);
 */
export type ScheduledJob<TEvent, TResult, TContext extends LambdaContextLike = LambdaContext> = (
  event: TEvent,
  context: TContext,
  lock: Lock,
) => Promise<TResult>;
