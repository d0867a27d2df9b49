/**
 * The protected resource of a simulated schedule, in virtual time: per lock key a counter that
 * holders update with a deliberately non-atomic read-modify-write (a read, time passing, a write),
 * and the README's fenced store (a write is accepted only with a fence above the last accepted
 * one). Never faulted: what it records is the ground truth the checker compares with.
 *
 * @module
 */

import type { ResourceState } from "../../safety/harness/history";

/** Virtual time as the workload sees it. */
export interface Clock {
  /** Global virtual time (ms). */
  now(): number;
  /** Resolves after `ms` of virtual time. */
  sleep(ms: number): Promise<void>;
}

interface Cell {
  counter: number;
  fencedCounter: number;
  lastFence: number;
}

/**
 * @example
 * const store = new SimStore(clock, 1);
 * const read = await store.read("k");
 * await store.write("k", read + 1);
 */
export class SimStore {
  readonly #cells = new Map<string, Cell>();

  /** `latency`: ms of virtual time each access takes (the window a second holder would hit). */
  constructor(
    private readonly clock: Clock,
    private readonly latency: number,
  ) {}

  #cell(key: string): Cell {
    let cell = this.#cells.get(key);
    if (cell === undefined) {
      cell = { counter: 0, fencedCounter: 0, lastFence: 0 };
      this.#cells.set(key, cell);
    }
    return cell;
  }

  /** The counter's value, read at the end of the access. */
  async read(key: string): Promise<number> {
    await this.clock.sleep(this.latency);
    return this.#cell(key).counter;
  }

  /** Overwrite the counter (the second half of the non-atomic update). */
  async write(key: string, value: number): Promise<void> {
    await this.clock.sleep(this.latency);
    this.#cell(key).counter = value;
  }

  /** The fenced counter's value (read before a fenced write of value + 1). */
  async readFenced(key: string): Promise<number> {
    await this.clock.sleep(this.latency);
    return this.#cell(key).fencedCounter;
  }

  /**
   * The README's fenced write: sets the fenced counter to `value` and accepts (true) only when
   * `fence` is above the last accepted fence.
   */
  async fencedWrite(key: string, fence: number, value: number): Promise<boolean> {
    await this.clock.sleep(this.latency);
    const cell = this.#cell(key);
    if (fence <= cell.lastFence) return false;
    cell.lastFence = fence;
    cell.fencedCounter = value;
    return true;
  }

  /** Final state per key, as the history checker reads it. */
  state(): Record<string, ResourceState> {
    const out: Record<string, ResourceState> = {};
    for (const [key, cell] of this.#cells) out[key] = { ...cell };
    return out;
  }
}
