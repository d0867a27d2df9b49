/**
 * Making sure no redis-server outlives the Node process that started it.
 *
 * Three layers, from polite to brutal:
 * 1. `stop()` of the cluster (normal path).
 * 2. `exit`, `SIGINT`, `SIGTERM` and `SIGHUP` hooks in this process, installed while at least one
 *    cluster runs, that SIGKILL every child synchronously.
 * 3. A watchdog `sh` per cluster that reads redis PIDs on its stdin and SIGKILLs them when that pipe
 *    closes: the kernel closes it whenever this process dies, even by SIGKILL, which no in-process
 *    hook survives. Node has no `prctl(PR_SET_PDEATHSIG)`, and this also works on macOS.
 *
 * redis-server and the watchdog run in their own process groups: signals a terminal or a supervisor
 * sends to this process's group (Ctrl-C, `kill -- -pgid`) reach this process, which then stops them,
 * rather than killing them behind its back (or killing the watchdog along with this process).
 *
 * @module
 */

import { type ChildProcess, spawn } from "node:child_process";

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
type HookedSignal = (typeof SIGNALS)[number];

/** Synchronous "kill everything now" functions, one per running cluster. */
const emergencyStops = new Set<() => void>();
let installed = false;

function runEmergencyStops(): void {
  for (const stop of emergencyStops) {
    try {
      stop();
    } catch {
      // Best effort while exiting: one failing cleanup must not keep the others from running.
    }
  }
}

function onExit(): void {
  runEmergencyStops();
}

function onSignal(signal: HookedSignal): void {
  runEmergencyStops();
  // Listening replaced the default action (terminate). When nobody else listens, restore it and
  // re-raise so the process still dies of the signal, as it would have without us.
  if (process.listenerCount(signal) === 1) {
    uninstall();
    process.kill(process.pid, signal);
  }
}

const signalHandlers = new Map<HookedSignal, () => void>(
  SIGNALS.map((signal) => [signal, () => onSignal(signal)]),
);

function install(): void {
  if (installed) return;
  installed = true;
  process.on("exit", onExit);
  for (const [signal, handler] of signalHandlers) process.on(signal, handler);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.off("exit", onExit);
  for (const [signal, handler] of signalHandlers) process.off(signal, handler);
}

/**
 * Registers a synchronous cleanup that runs if the process exits or gets SIGINT/SIGTERM/SIGHUP while
 * the cluster is still running. Returns the function that unregisters it (call it from `stop()`).
 */
export function registerEmergencyStop(stop: () => void): () => void {
  emergencyStops.add(stop);
  install();
  return () => {
    emergencyStops.delete(stop);
    if (emergencyStops.size === 0) uninstall();
  };
}

// The watchdog ignores terminal signals so that a Ctrl-C on the whole process group cannot kill it
// before it has done its job; it ends when its stdin reaches EOF.
const WATCHDOG_SCRIPT = `trap '' INT TERM HUP
pids=""
while IFS= read -r line; do
  case "$line" in
    +*) pids="$pids \${line#+}" ;;
    -*) keep=""; for p in $pids; do [ "$p" = "\${line#-}" ] || keep="$keep $p"; done; pids="$keep" ;;
  esac
done
[ -n "$pids" ] && kill -9 $pids 2>/dev/null
[ -n "$1" ] && rm -rf -- "$1"
exit 0`;

/**
 * The parent-death safeguard: a tiny `sh` that SIGKILLs the PIDs it was told about when this process
 * goes away (its stdin pipe closes), then removes the cluster's temporary directory `dir`, so not
 * even a SIGKILLed CLI or test run leaves an `edgelock-dev-*` directory behind. Without `sh`
 * (Windows) it silently does nothing.
 */
export class Watchdog {
  readonly #child: ChildProcess | undefined;

  constructor(dir = "") {
    let child: ChildProcess | undefined;
    try {
      // Own process group too, so a SIGKILL sent to this process's whole group spares it.
      child = spawn("sh", ["-c", WATCHDOG_SCRIPT, "edgelock-watchdog", dir], {
        stdio: ["pipe", "ignore", "ignore"],
        detached: true,
      });
      child.on("error", () => {});
      child.stdin?.on("error", () => {});
      // The watchdog must never be what keeps this process alive.
      child.unref();
      (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    } catch {
      child = undefined;
    }
    this.#child = child;
  }

  /** Starts guarding `pid`. */
  watch(pid: number): void {
    this.#write(`+${pid}\n`);
  }

  /** Stops guarding `pid` (it exited), so a recycled PID is never killed. */
  unwatch(pid: number): void {
    this.#write(`-${pid}\n`);
  }

  /** Ends the watchdog; it kills whatever it still guards, which after a clean stop is nothing. */
  close(): void {
    const stdin = this.#child?.stdin;
    if (stdin && !stdin.destroyed) stdin.end();
  }

  #write(line: string): void {
    const stdin = this.#child?.stdin;
    if (stdin && !stdin.destroyed && stdin.writable) stdin.write(line);
  }
}
