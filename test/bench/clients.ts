/**
 * Clients of the lock bench and how requests are counted.
 *
 * - {@link edgelockLikeClient}: an `@upstash/redis` client configured exactly as edgelock builds its
 *   own from `{ url, token }` (src/node/create.ts): the Cloudflare entry (plain fetch), one attempt
 *   per request, no auto-pipelining, no telemetry headers, no reply deserialization. The raw floor
 *   and `@upstash/lock` use it, so every REST contender runs the same client library, the same
 *   fetch path and the same settings; only the library around the calls differs.
 * - {@link defaultClient}: `new Redis({ url, token })` from the package's default (Node) entry,
 *   i.e. what a user of `@upstash/lock` writes: auto-pipelining on, 5 retries, telemetry on.
 * - REST requests are counted at the endpoints (`controls[i].stats()`); node-redlock's TCP commands
 *   with `INFO commandstats` on each redis-server (eval + evalsha calls).
 *
 * @module
 */
import { Redis as DefaultRedis } from "@upstash/redis";
import { Redis } from "@upstash/redis/cloudflare";
import { Redis as IORedis } from "ioredis";
import type { DevNodeConfig } from "../../src/dev/index";
import type { BenchCluster } from "./cluster";
import { sleep } from "./stats";

/** `@upstash/redis` client set up like edgelock's own (see the module comment). */
export function edgelockLikeClient(node: DevNodeConfig): Redis {
  return new Redis({
    url: node.url,
    token: node.token,
    retry: { retries: 0, backoff: () => 0 },
    enableAutoPipelining: false,
    enableTelemetry: false,
    automaticDeserialization: false,
  });
}

/** `@upstash/redis` with its defaults (auto-pipelining on, 5 retries, telemetry on). */
export function defaultClient(node: DevNodeConfig): DefaultRedis {
  return new DefaultRedis({ url: node.url, token: node.token });
}

/** Direct TCP connections to the first `n` redis-servers (node-redlock, INFO commandstats). */
export function ioredisClients(cluster: BenchCluster, n: number): IORedis[] {
  return cluster.controls.slice(0, n).map((control) => {
    const client = new IORedis(control.redisUrl, { maxRetriesPerRequest: 1 });
    client.on("error", () => {});
    return client;
  });
}

/** HTTP requests served by the first `n` endpoints since their last reset. */
export async function endpointRequests(
  cluster: BenchCluster,
  n = cluster.controls.length,
): Promise<number> {
  const stats = await Promise.all(cluster.controls.slice(0, n).map((c) => c.stats()));
  return stats.reduce((sum, s) => sum + s.requests, 0);
}

export async function resetEndpointStats(cluster: BenchCluster): Promise<void> {
  await Promise.all(cluster.controls.map((c) => c.resetStats()));
}

/**
 * Wait until no endpoint request has arrived for `quietMs` (stragglers of rounds that resolved at
 * a majority are still in flight when the caller moves on), at most `maxMs`.
 */
export async function settle(cluster: BenchCluster, quietMs = 100, maxMs = 3_000): Promise<void> {
  const until = performance.now() + maxMs;
  let last = await endpointRequests(cluster);
  let quietSince = performance.now();
  while (performance.now() < until) {
    await sleep(20);
    const now = await endpointRequests(cluster);
    if (now !== last) {
      last = now;
      quietSince = performance.now();
    } else if (performance.now() - quietSince >= quietMs) {
      return;
    }
  }
}

/**
 * Script calls (`eval` + `evalsha`, including rejected ones) a redis-server has run, from
 * `INFO commandstats`. The INFO command itself is not counted.
 */
export async function scriptCalls(client: IORedis): Promise<number> {
  const info = await client.info("commandstats");
  let total = 0;
  for (const match of info.matchAll(/^cmdstat_(eval|evalsha):(.*)$/gm)) {
    const fields = new Map(
      (match[2] ?? "").split(",").map((pair) => pair.split("=") as [string, string]),
    );
    total += Number(fields.get("calls") ?? 0) + Number(fields.get("rejected_calls") ?? 0);
  }
  return total;
}

/** Sum of {@link scriptCalls} over `clients`. */
export async function totalScriptCalls(clients: readonly IORedis[]): Promise<number> {
  const counts = await Promise.all(clients.map(scriptCalls));
  return counts.reduce((a, b) => a + b, 0);
}

/** A fresh 128-bit hex token, like the one edgelock draws per round. */
export function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
