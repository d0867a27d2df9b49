/**
 * Shared vitest helpers around `startDevCluster`: one cluster per test file (started in
 * `beforeAll`, stopped in `afterAll`), `@upstash/redis` clients for its nodes, direct ioredis
 * connections for assertions that must not go through the endpoint, and unique key prefixes.
 *
 * @example
 * ```ts
 * const dev = useDevCluster({ nodes: 3 });
 * it("works", async () => {
 *   const key = uniqueKey("lock");
 *   await dev.client(0).set(key, "v");
 *   expect(await dev.direct(0).get(key)).toBe("v");
 * });
 * ```
 *
 * @module
 */

import { type RedisConfigNodejs, Redis as UpstashRedis } from "@upstash/redis";
import { Redis as IORedis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { type DevCluster, type DevClusterOptions, startDevCluster } from "../../src/dev/index";

/** Accessors of the file's cluster; valid between `beforeAll` and `afterAll`. */
export interface DevClusterFixture {
  /** The running cluster (throws before `beforeAll` ran). */
  readonly cluster: DevCluster;
  /** An unmodified `@upstash/redis` client for node `i`; `options` are passed through. */
  client(i: number, options?: Partial<RedisConfigNodejs>): UpstashRedis;
  /** A direct ioredis connection to node `i`'s redis-server (closed in `afterAll`). */
  direct(i: number): IORedis;
}

/** Starts a dev cluster for the current test file and stops it afterwards. */
export function useDevCluster(options: DevClusterOptions = {}): DevClusterFixture {
  let cluster: DevCluster | undefined;
  const directs = new Map<number, IORedis>();
  beforeAll(async () => {
    cluster = await startDevCluster(options);
    await warmUp(cluster);
  });
  afterAll(async () => {
    for (const connection of directs.values()) connection.disconnect();
    await cluster?.stop();
  });
  const running = (): DevCluster => {
    if (cluster === undefined) throw new Error("dev cluster not started (use it inside tests)");
    return cluster;
  };
  return {
    get cluster() {
      return running();
    },
    client(i, clientOptions = {}) {
      const node = running().nodes[i];
      if (node === undefined) throw new Error(`no node ${i}`);
      return new UpstashRedis({ url: node.url, token: node.token, ...clientOptions });
    },
    direct(i) {
      let connection = directs.get(i);
      if (connection === undefined) {
        const control = running().controls[i];
        if (control === undefined) throw new Error(`no node ${i}`);
        connection = new IORedis(control.redisUrl, { maxRetriesPerRequest: 1 });
        connection.on("error", () => {});
        directs.set(i, connection);
      }
      return connection;
    },
  };
}

/**
 * Opens the pooled keep-alive connection to every node and runs a script once, then zeroes the
 * counters. Without it the first test of a file pays the cold path (TCP connect, the endpoint's and
 * the server's first script) inside the library's default 250 ms node timeout, which a loaded
 * machine can exceed.
 */
async function warmUp(cluster: DevCluster): Promise<void> {
  await Promise.all(
    cluster.nodes.map(async (node) => {
      for (const command of [["PING"], ["EVAL", "return 1", "0"]]) {
        // Best effort: a file may start its cluster with a fault the warm-up must not trip over.
        const response = await fetch(node.url, {
          method: "POST",
          headers: { authorization: `Bearer ${node.token}` },
          body: JSON.stringify(command),
          signal: AbortSignal.timeout(5_000),
        }).catch(() => undefined);
        await response?.arrayBuffer().catch(() => undefined);
      }
    }),
  );
  for (const control of cluster.controls) control.resetStats();
}

/** A key no other test uses: `<name>:<uuid>`. */
export function uniqueKey(name: string): string {
  return `${name}:${crypto.randomUUID()}`;
}
