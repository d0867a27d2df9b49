/**
 * The parent's side of a client process: fork `child.ts` under tsx, start its clients, measure its
 * clock offset (before the run and after its clients stopped), collect its history and translate
 * its times onto the parent's clock.
 *
 * @module
 */

import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { FromChild, ToChild } from "./child";
import type { ClientsConfig, ClientsResult } from "./clients";
import { type ClockOffset, combineOffsets, estimateOffset, now, type SyncSample } from "./clock";
import type { GrantRecord } from "./history";

/** A child's history on the parent's clock, with the offset used and its error bound. */
export interface ChildClientsResult extends ClientsResult {
  readonly clock: ClockOffset;
}

const CHILD = fileURLToPath(new URL("./child.ts", import.meta.url));
/** Ping-pongs per offset estimate; the fastest round trip wins. */
const SYNC_SAMPLES = 25;

/** One forked client process. */
export class ClientProcess {
  readonly #child: ChildProcess;
  readonly #waiting = new Map<number, (t: number) => void>();
  #nextId = 0;
  #done: Promise<FromChild & { type: "done" }>;
  #exited = false;

  constructor() {
    this.#child = fork(CHILD, [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.#done = new Promise((resolve, reject) => {
      this.#child.on("message", (message: FromChild) => {
        if (message.type === "pong") this.#waiting.get(message.id)?.(message.t);
        else if (message.type === "done") resolve(message);
        else reject(new Error(`client process failed: ${message.message}`));
      });
      this.#child.once("exit", (code) => {
        this.#exited = true;
        reject(new Error(`client process exited early (code ${code})`));
      });
    });
    // Rejections are observed by `result()`; an early exit before that must not be unhandled.
    this.#done.catch(() => {});
  }

  #send(message: ToChild): void {
    if (!this.#exited) this.#child.send(message);
  }

  /** Estimate this child's clock offset to ours. */
  async sync(): Promise<ClockOffset> {
    const samples: SyncSample[] = [];
    for (let i = 0; i < SYNC_SAMPLES; i++) {
      const id = this.#nextId++;
      const t1 = now();
      const tc = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no pong within 10 s")), 10_000);
        this.#waiting.set(id, (t) => {
          clearTimeout(timer);
          this.#waiting.delete(id);
          resolve(t);
        });
        this.#send({ type: "ping", id });
      });
      samples.push({ t1, tc, t2: now() });
    }
    return estimateOffset(samples);
  }

  start(config: ClientsConfig): void {
    this.#send({ type: "start", config });
  }

  stop(): void {
    this.#send({ type: "stop" });
  }

  /**
   * Wait for the history, measure the offset once more, and return the history on our clock with
   * the bound on its error.
   */
  async result(start: ClockOffset): Promise<ChildClientsResult> {
    const { result } = await this.#done;
    const offset = combineOffsets(start, await this.sync());
    const shift = (t: number) => t - offset.offset;
    const grants = result.grants.map((g): GrantRecord => {
      const moved: GrantRecord = {
        ...g,
        requested: shift(g.requested),
        granted: shift(g.granted),
        validEnd: shift(g.validEnd),
      };
      if (g.releaseStart !== undefined) moved.releaseStart = shift(g.releaseStart);
      if (g.lostAt !== undefined) moved.lostAt = shift(g.lostAt);
      if (g.counter?.state === "done") {
        moved.counter = {
          ...g.counter,
          readAt: shift(g.counter.readAt),
          ackAt: shift(g.counter.ackAt),
        };
      }
      if (g.fenced?.state === "done") moved.fenced = { ...g.fenced, at: shift(g.fenced.at) };
      return moved;
    });
    return { ...result, grants, clock: offset };
  }

  /** Ends the process (idempotent). */
  kill(): void {
    if (this.#exited) return;
    this.#send({ type: "exit" });
    const child = this.#child;
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }, 2_000).unref();
  }
}
