/**
 * Plays a fault schedule against the lock cluster's nodes in real time, and records what was
 * actually injected (per kind) and when a node lost its data (for the checker's fence rule).
 *
 * @module
 */

import type { DevNode, Fault } from "../../../src/dev/index";
import { now } from "./clock";
import type { Wipe } from "./history";
import type { FaultEvent, FaultKind } from "./schedule";

/** Injects a schedule; `finish()` heals every node. */
export class FaultInjector {
  readonly #controls: readonly DevNode[];
  readonly #events: readonly FaultEvent[];
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #paused = new Set<number>();
  readonly injected: Partial<Record<FaultKind, number>> = {};
  /** Events that could not be applied (e.g. the node was still restarting), per kind. */
  readonly skipped: Partial<Record<FaultKind, number>> = {};
  readonly wipes: Wipe[] = [];
  /** The largest latency injected (ms): delayed requests may land this late. */
  maxLatencyMs = 0;

  constructor(controls: readonly DevNode[], events: readonly FaultEvent[]) {
    this.#controls = controls;
    this.#events = events;
  }

  /** Arms one timer per event, relative to now. */
  start(): void {
    for (const event of this.#events) {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        this.#apply(event);
      }, event.at);
      this.#timers.add(timer);
    }
  }

  /** Cancels what has not fired, clears faults, resumes paused nodes, awaits running restarts. */
  async finish(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const node of this.#paused) this.#controls[node]?.resume();
    this.#paused.clear();
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
    for (const control of this.#controls) control.clearFaults();
  }

  #count(kind: FaultKind, applied: boolean): void {
    const target = applied ? this.injected : this.skipped;
    target[kind] = (target[kind] ?? 0) + 1;
  }

  #track(promise: Promise<unknown>): void {
    this.#pending.add(promise);
    void promise.finally(() => this.#pending.delete(promise));
  }

  #apply(event: FaultEvent): void {
    const control = this.#controls[event.node];
    if (control === undefined) return;
    const count = event.count === undefined ? {} : { count: event.count };
    let fault: Fault;
    switch (event.kind) {
      case "latency": {
        const ms = event.ms ?? [0, 0];
        this.maxLatencyMs = Math.max(this.maxLatencyMs, ms[1]);
        fault = { kind: "latency", ms, ...count };
        break;
      }
      case "status-5xx":
        fault = { kind: "status", status: event.status ?? 503, ...count };
        break;
      case "non-json":
        fault = { kind: "status", status: event.status ?? 502, body: event.body ?? "", ...count };
        break;
      case "reset-before":
      case "reset-after":
      case "hang":
      case "noscript":
        fault = { kind: event.kind, ...count };
        break;
      case "pause":
        this.#pause(event, control);
        return;
      default:
        this.#restart(event, control);
        return;
    }
    control.inject(fault);
    this.#count(event.kind, true);
  }

  #pause(event: FaultEvent, control: DevNode): void {
    try {
      control.pause();
    } catch {
      this.#count(event.kind, false); // still restarting from an earlier event
      return;
    }
    this.#paused.add(event.node);
    this.#count(event.kind, true);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#paused.delete(event.node);
      control.resume();
    }, event.forMs ?? 0);
    this.#timers.add(timer);
  }

  #restart(event: FaultEvent, control: DevNode): void {
    const keepData = event.kind === "restart-keep" || event.kind === "restart-keep-delayed";
    const at = now();
    this.#count(event.kind, true);
    const restarting = control.restart({ delayMs: event.delayMs ?? 0, keepData }).then(
      () => {
        if (!keepData) this.wipes.push({ node: event.node, at, backAt: now() });
      },
      () => {
        // A failed restart still killed the node (and its data, when not kept).
        if (!keepData) this.wipes.push({ node: event.node, at });
      },
    );
    this.#track(restarting);
  }
}
