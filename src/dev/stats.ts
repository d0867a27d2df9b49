/**
 * Request and command counters of one node's endpoint, so tests can count subrequests ("an
 * uncontended acquire + release costs 2 requests per node") and script round trips ("EVALSHA,
 * then EVAL, then EVALSHA again").
 *
 * @module
 */

import type { ParsedCommand } from "./request";
import type { NodeStats } from "./types";

/** Mutable counters behind `DevNode.stats()`. */
export class Stats {
  #requests = 0;
  #commands = new Map<string, number>();

  /** One HTTP request on a data route, whatever its outcome. */
  countRequest(): void {
    this.#requests++;
  }

  /** The commands of an authorized, well-formed request. */
  countCommands(commands: readonly ParsedCommand[]): void {
    for (const { lower } of commands)
      this.#commands.set(lower, (this.#commands.get(lower) ?? 0) + 1);
  }

  /** A snapshot: later requests do not change it. */
  snapshot(): NodeStats {
    return { requests: this.#requests, commands: Object.fromEntries(this.#commands) };
  }

  /** Back to zero. */
  reset(): void {
    this.#requests = 0;
    this.#commands = new Map();
  }
}
