/**
 * Process helpers for tests that prove nothing is left behind: is a PID still a live process, wait
 * until it is gone, and which redis-server PIDs a cluster runs.
 *
 * @module
 */

import { readdirSync, readFileSync } from "node:fs";
import { Redis } from "ioredis";

/**
 * Whether `pid` is a running process. A zombie (exited, not yet reaped, which happens to orphans
 * when PID 1 does not reap) counts as gone: it holds no port, memory or data.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state …"; comm may contain spaces, so split after the ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return process.platform !== "linux";
  }
}

/** Resolves once every PID is gone; rejects with the survivors after `timeoutMs`. */
export async function waitForExit(pids: readonly number[], timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(isProcessAlive);
    if (alive.length === 0) return;
    if (performance.now() > deadline) {
      throw new Error(`processes still alive after ${timeoutMs} ms: ${alive.join(", ")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** `process_id` from `INFO server` of the redis-server at `redisUrl`. */
export async function redisServerPid(redisUrl: string): Promise<number> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await redis.connect();
    return parseInfoPid(await redis.info("server"));
  } finally {
    redis.disconnect();
  }
}

/** The data directory (`CONFIG GET dir`) of the redis-server at `redisUrl`. */
export async function redisServerDir(redisUrl: string): Promise<string> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await redis.connect();
    const [, dir] = (await redis.config("GET", "dir")) as [string, string];
    return dir;
  } finally {
    redis.disconnect();
  }
}

/** Reads `process_id:<n>` out of an `INFO server` text. */
export function parseInfoPid(info: string): number {
  const match = /^process_id:(\d+)/m.exec(info);
  if (!match?.[1]) throw new Error("no process_id in INFO server");
  return Number(match[1]);
}

/**
 * PIDs of the live redis-server processes whose parent is this process (Linux `/proc`; empty
 * elsewhere), to detect leaks without counting other test workers' servers.
 */
export function childRedisServerPids(): number[] {
  if (process.platform !== "linux") return [];
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid …"
    const close = stat.lastIndexOf(")");
    const [state, ppid] = stat.slice(close + 2).split(" ");
    if (stat.includes("(redis-server)") && state !== "Z" && Number(ppid) === process.pid) {
      pids.push(Number(entry));
    }
  }
  return pids;
}
