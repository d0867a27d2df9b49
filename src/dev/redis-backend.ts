/**
 * The `Backend` of a node run by redis-server (see `backend.ts`): ioredis connections to it.
 *
 * - One shared connection carries single commands and pipelines, RESP-pipelined in request order
 *   (each pipeline is one socket write).
 * - `/multi-exec` borrows a dedicated connection from a small pool (never shared by two transactions,
 *   the SRH#25 bug), sends `MULTI`, the commands and `EXEC` in one write, and returns the connection
 *   only when `EXEC` answered; on every other path the connection is destroyed. A queue-time error
 *   makes Redis answer `EXEC` with `EXECABORT` — Redis itself discards the transaction, exactly as
 *   `DISCARD` would, without a second round trip.
 * - Each SSE stream (`/subscribe`, `/psubscribe`) gets a connection of its own from `subscriber()`,
 *   owned and closed by `subscribe.ts`.
 *
 * ioredis options, and why: binary replies (no reply transformers, see `RawCommand`) so values are
 * byte-exact; `stringNumbers` so integers keep every digit; `enableOfflineQueue: false` and
 * `maxRetriesPerRequest: 0` so a killed redis-server fails requests at once (5xx) instead of queueing
 * them; `autoResendUnfulfilledCommands: false` so a command is never silently run twice after a
 * reconnect; no command timeout, so a paused (SIGSTOPped) server stalls requests like a real one.
 *
 * @module
 */

import { Command, type Pipeline, Redis, type RedisOptions } from "ioredis";
import {
  type Backend,
  BackendUnavailableError,
  type Replace,
  type Subscriber,
  type TransactionOutcome,
} from "./backend";
import type { RedisReply } from "./encode";
import type { ParsedCommand } from "./request";

/** A command whose reply skips ioredis's per-command reply transformers (HGETALL → object). */
class RawCommand extends Command {
  override transformReply(result: Buffer | Buffer[]): Buffer | Buffer[] {
    return result;
  }
}

/**
 * Queue `commands` on `pipeline`, except those `replace` answers itself (injected faults): their
 * replies go straight into `replies`. Returns the positions that were sent, in order.
 */
function enqueue(
  pipeline: Pipeline,
  commands: readonly ParsedCommand[],
  replace: Replace | undefined,
  replies: RedisReply[],
): number[] {
  const sent: number[] = [];
  commands.forEach((command, i) => {
    const replacement = replace?.(command);
    if (replacement !== undefined) replies[i] = replacement;
    else {
      sent.push(i);
      pipeline.sendCommand(new RawCommand(command.name, command.args));
    }
  });
  return sent;
}

/** Idle transaction connections kept for reuse; more are opened under concurrency. */
const MAX_IDLE_TRANSACTION_CONNECTIONS = 8;
/** Reconnect delay of the shared connection while redis-server is down. */
const RECONNECT_DELAY_MS = 50;
/** `CLIENT LIST` name of SSE subscriber connections, so tests can count them on redis-server. */
export const SUBSCRIBER_CONNECTION_NAME = "edgelock-dev-subscriber";

const isReplyError = (error: unknown): error is Error =>
  error instanceof Error && error.name === "ReplyError";

function baseOptions(host: string, port: number): RedisOptions {
  return {
    host,
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    stringNumbers: true,
  };
}

/** Connections to one redis-server. A command `replace`d by the caller is not sent. */
export class RedisBackend implements Backend {
  readonly #host: string;
  readonly #port: number;
  readonly #shared: Redis;
  readonly #idle: Redis[] = [];
  readonly #busy = new Set<Redis>();
  #closed = false;

  constructor(host: string, port: number) {
    this.#host = host;
    this.#port = port;
    this.#shared = new Redis({
      ...baseOptions(host, port),
      connectionName: "edgelock-dev",
      retryStrategy: () => RECONNECT_DELAY_MS,
    });
    // Errors surface per command; the event would otherwise be logged as unhandled.
    this.#shared.on("error", () => {});
  }

  /** Opens the shared connection. */
  async connect(): Promise<void> {
    await this.#shared.connect();
  }

  /** Resolves once the shared connection is ready (after a restart), or rejects after `timeoutMs`. */
  waitReady(timeoutMs: number): Promise<void> {
    if (this.#shared.status === "ready") return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#shared.off("ready", onReady);
        reject(new BackendUnavailableError(`no connection to redis-server after ${timeoutMs} ms`));
      }, timeoutMs);
      this.#shared.once("ready", onReady);
    });
  }

  /** Runs one command on the shared connection; a Redis error reply resolves as an `Error`. */
  async command(command: ParsedCommand): Promise<RedisReply> {
    try {
      return (await this.#shared.sendCommand(
        new RawCommand(command.name, command.args),
      )) as RedisReply;
    } catch (error) {
      if (isReplyError(error)) return error;
      throw unavailable(error);
    }
  }

  /**
   * Runs commands in order on the shared connection in one write. `replace(i)` returning a reply
   * answers command i without sending it (fault injection).
   */
  async pipeline(commands: readonly ParsedCommand[], replace?: Replace): Promise<RedisReply[]> {
    const replies: RedisReply[] = new Array(commands.length);
    const pipeline = this.#shared.pipeline() as unknown as Pipeline;
    const sent = enqueue(pipeline, commands, replace, replies);
    if (sent.length > 0) {
      const results = (await pipeline.exec()) ?? [];
      sent.forEach((position, j) => {
        const [error, reply] = results[j] ?? [new Error("missing pipeline reply"), null];
        if (error && !isReplyError(error)) throw unavailable(error);
        replies[position] = (error ?? reply) as RedisReply;
      });
    }
    return replies;
  }

  /** Runs `MULTI`, the commands and `EXEC` on a dedicated connection. */
  async transaction(
    commands: readonly ParsedCommand[],
    replace?: Replace,
  ): Promise<TransactionOutcome> {
    const connection = await this.#borrow();
    let reusable = false;
    try {
      const pipeline = connection.pipeline() as unknown as Pipeline;
      const replies: RedisReply[] = new Array(commands.length);
      pipeline.sendCommand(new RawCommand("multi", []));
      const sent = enqueue(pipeline, commands, replace, replies);
      pipeline.sendCommand(new RawCommand("exec", []));
      const results = (await pipeline.exec()) ?? [];
      for (const [error] of results) {
        if (error && !isReplyError(error)) throw unavailable(error);
      }
      const [multiError] = results[0] ?? [new Error("missing MULTI reply")];
      if (multiError) throw unavailable(multiError);
      const queueError = results.slice(1, -1).find(([error]) => error)?.[0];
      const [execError, execReply] = results[results.length - 1] ?? [new Error("no EXEC reply")];
      reusable = true; // EXEC answered: the connection is out of MULTI either way.
      if (queueError || execError) {
        return { ok: false, error: (queueError ?? execError)?.message ?? "EXECABORT" };
      }
      if (!Array.isArray(execReply)) throw unavailable(new Error("EXEC returned no array"));
      sent.forEach((position, j) => {
        replies[position] = execReply[j] as RedisReply;
      });
      return { ok: true, replies };
    } finally {
      this.#giveBack(connection, reusable);
    }
  }

  /**
   * A new, unconnected connection for one SSE subscriber (see `subscribe.ts`); the caller connects
   * and disconnects it. Dedicated because a subscribed connection accepts nothing but
   * (un)subscribe commands; never reconnecting, because a subscription silently restored after a
   * restart would hide the messages lost meanwhile: the stream ends instead and the client sees it.
   */
  subscriber(): Subscriber {
    return new RedisSubscriber(
      new Redis({
        ...baseOptions(this.#host, this.#port),
        connectionName: SUBSCRIBER_CONNECTION_NAME,
        retryStrategy: () => null,
        autoResubscribe: false,
      }),
    );
  }

  /** Closes every connection. */
  close(): void {
    this.#closed = true;
    this.#shared.disconnect();
    for (const connection of [...this.#idle, ...this.#busy]) connection.disconnect();
    this.#idle.length = 0;
    this.#busy.clear();
  }

  async #borrow(): Promise<Redis> {
    while (this.#idle.length > 0) {
      const connection = this.#idle.pop() as Redis;
      if (connection.status === "ready") {
        this.#busy.add(connection);
        return connection;
      }
      connection.disconnect();
    }
    // No reconnects: a transaction connection that broke is thrown away, never reused.
    const connection = new Redis({
      ...baseOptions(this.#host, this.#port),
      retryStrategy: () => null,
    });
    connection.on("error", () => {});
    this.#busy.add(connection);
    try {
      await connection.connect();
    } catch (error) {
      this.#busy.delete(connection);
      connection.disconnect();
      throw unavailable(error);
    }
    return connection;
  }

  #giveBack(connection: Redis, reusable: boolean): void {
    this.#busy.delete(connection);
    if (
      reusable &&
      !this.#closed &&
      connection.status === "ready" &&
      this.#idle.length < MAX_IDLE_TRANSACTION_CONNECTIONS
    ) {
      this.#idle.push(connection);
    } else {
      connection.disconnect();
    }
  }
}

/** One SSE stream's connection in subscriber mode. */
class RedisSubscriber implements Subscriber {
  readonly #connection: Redis;

  constructor(connection: Redis) {
    this.#connection = connection;
  }

  async connect(): Promise<void> {
    try {
      await this.#connection.connect();
    } catch (error) {
      throw unavailable(error);
    }
  }

  async subscribe(target: string, pattern: boolean): Promise<number> {
    try {
      const count = pattern
        ? await this.#connection.psubscribe(target)
        : await this.#connection.subscribe(target);
      return Number(count);
    } catch (error) {
      throw unavailable(error);
    }
  }

  onMessage(listener: (channel: string, message: string, pattern?: string) => void): void {
    this.#connection.on("message", (channel: string, message: string) =>
      listener(channel, message),
    );
    this.#connection.on("pmessage", (pattern: string, channel: string, message: string) =>
      listener(channel, message, pattern),
    );
  }

  onEnd(listener: () => void): void {
    // Without reconnects, an error is always followed by the end of the connection.
    this.#connection.on("error", listener);
    this.#connection.once("end", listener);
  }

  disconnect(): void {
    this.#connection.disconnect();
  }
}

function unavailable(error: unknown): BackendUnavailableError {
  const message = error instanceof Error ? error.message : String(error);
  return new BackendUnavailableError(`redis-server unavailable: ${message}`, { cause: error });
}
