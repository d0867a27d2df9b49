/**
 * Helpers for the lock integration tests: unique prefixes, reading keys back from every node's
 * redis-server directly (not through the REST endpoint), counting endpoint requests, medians.
 *
 * @module
 */
import type { DevCluster } from "../../src/dev/index";
import type { DevClusterFixture } from "../support/dev-cluster";

/** A key prefix no other test uses. */
export const uniquePrefix = (name: string): string => `t:${name}:${crypto.randomUUID()}:`;

/** Raw value of `key` on nodes 0..n-1, read with ioredis. */
export function readBack(
  dev: DevClusterFixture,
  n: number,
  key: string,
): Promise<(string | null)[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => dev.direct(i).get(key)));
}

/** PTTL of `key` on nodes 0..n-1 (-2 absent, -1 no expiry). */
export function pttlBack(dev: DevClusterFixture, n: number, key: string): Promise<number[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => dev.direct(i).pttl(key)));
}

/** HTTP requests served by nodes 0..n-1 since their last reset. */
export function requests(cluster: DevCluster, n = cluster.controls.length): number {
  return cluster.controls.slice(0, n).reduce((sum, c) => sum + c.stats().requests, 0);
}

/** Clear faults and statistics on every node (resume paused ones). */
export function resetCluster(cluster: DevCluster): void {
  for (const control of cluster.controls) {
    control.clearFaults();
    control.resetStats();
  }
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Wait until `check()` is true (polling), or fail after `ms`. */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  ms = 5_000,
): Promise<void> {
  const until = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > until) throw new Error("condition not met in time");
    await sleep(10);
  }
}

/**
 * Wait until nodes 0..n-1 served at least `count` requests since their last reset, then 50 ms
 * more, and return how many they served. A round is decided once a majority answered: its other
 * requests may land later — after the test reset the counters (then counted for the next step)
 * or after it read them (then missed). Counting from zero only once the previous steps' known
 * cost has landed, and asserting a count only once it has, makes request counts deterministic;
 * the pause lets an extra request show.
 */
export async function landed(
  cluster: DevCluster,
  count: number,
  n = cluster.controls.length,
): Promise<number> {
  await eventually(() => requests(cluster, n) >= count);
  await sleep(50);
  return requests(cluster, n);
}

/**
 * Wait until the nodes served no request for `quietMs` (at most `ms`), then reset their counters:
 * for a test that asserts "no node was called", so that a request of an earlier test still on its
 * way (a round is decided at a majority; the last node's request lands later) is not counted.
 */
export async function quietThenReset(
  cluster: DevCluster,
  quietMs = 100,
  ms = 3_000,
): Promise<void> {
  const until = performance.now() + ms;
  for (let last = requests(cluster); performance.now() < until; ) {
    await sleep(quietMs);
    const now = requests(cluster);
    if (now === last) break;
    last = now;
  }
  resetCluster(cluster);
}

/**
 * Script calls (EVAL and EVALSHA) redis-server `i` has run, from its `INFO commandstats`: counts
 * requests that ran on the server, also those the client gave up on (a latency fault).
 */
export async function evalCalls(dev: DevClusterFixture, i: number): Promise<number> {
  const info = await dev.direct(i).info("commandstats");
  let calls = 0;
  for (const match of info.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)) {
    calls += Number(match[1]);
  }
  return calls;
}
