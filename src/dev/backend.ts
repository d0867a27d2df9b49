/**
 * What a dev node's REST endpoint needs from the store behind it, so one endpoint (with its faults,
 * statistics and admin routes) serves either backend:
 *
 * - `RedisBackend` (`redis-backend.ts`): ioredis connections to a redis-server child process;
 * - `MemoryBackend` (`memory-backend.ts`): the in-process node (a Redis 7 keyspace with edgelock's
 *   Lua scripts run in a Lua VM), for machines without redis-server or ioredis.
 *
 * Replies use the shapes of `encode.ts` (`RedisReply`): bulk strings as `Buffer`s, integers as
 * numbers or their digits, errors as `Error`s. A command a caller `replace`s (an injected NOSCRIPT)
 * is answered with the replacement and never run.
 *
 * @module
 */

import type { RedisReply } from "./encode";
import type { ParsedCommand } from "./request";

/** The store is unreachable (killed, restarting) or broke mid-request: the endpoint answers 503. */
export class BackendUnavailableError extends Error {
  override name = "BackendUnavailableError";
}

/** Outcome of `/multi-exec`: per-command replies, or the queue-time error that aborted it. */
export type TransactionOutcome =
  | { readonly ok: true; readonly replies: RedisReply[] }
  | { readonly ok: false; readonly error: string };

/** Answers a command without running it (fault injection), or `undefined` to run it. */
export type Replace = (command: ParsedCommand) => RedisReply | undefined;

/**
 * One SSE stream's subscription (see `subscribe.ts`): connected, subscribed once, then delivering
 * messages until it ends. It never comes back on its own after the store was killed or restarted:
 * the stream ends instead, so the client sees that messages may have been lost.
 */
export interface Subscriber {
  /** Connects; rejects when the store is unreachable. */
  connect(): Promise<void>;
  /** Subscribes to a channel (`pattern` false) or a glob pattern; resolves with the count Redis reports. */
  subscribe(target: string, pattern: boolean): Promise<number>;
  /** Each message: its pattern (for a pattern subscription), channel and payload. */
  onMessage(listener: (channel: string, message: string, pattern?: string) => void): void;
  /** Called once when the subscription ends from the store's side (error, kill, restart). */
  onEnd(listener: () => void): void;
  /** Ends the subscription (idempotent). */
  disconnect(): void;
}

/** The store behind one endpoint. */
export interface Backend {
  /** Runs one command; an error reply resolves as an `Error`, an unreachable store rejects. */
  command(command: ParsedCommand): Promise<RedisReply>;
  /** Runs commands in order, not atomically (`/pipeline`). */
  pipeline(commands: readonly ParsedCommand[], replace?: Replace): Promise<RedisReply[]>;
  /** Runs commands atomically (`/multi-exec`); a queue-time error aborts all of them. */
  transaction(commands: readonly ParsedCommand[], replace?: Replace): Promise<TransactionOutcome>;
  /** A new, unconnected subscription for one SSE stream. */
  subscriber(): Subscriber;
  /** Closes every connection and subscription. */
  close(): void;
}
