// Options of startDevCluster: validation naming the option, a missing redis-server, fixed ports,
// and a port already in use (no process left behind by a half-started cluster).
import { createServer, type Server } from "node:net";
import { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { DevClusterError, RedisServerNotFoundError, startDevCluster } from "../../src/dev/index";
import { childRedisServerPids, isProcessAlive, redisServerPid } from "../support/processes";

function listen(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

const close = (server: Server | undefined) =>
  new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));

/** A port P with P and P+1 free right now. */
async function twoFreePorts(): Promise<number> {
  for (;;) {
    const first = await listen(0);
    if (first === undefined) continue;
    const { port } = first.address() as { port: number };
    const second = await listen(port + 1);
    await close(first);
    await close(second);
    if (second !== undefined && port < 65_535) return port;
  }
}

describe("startDevCluster options", () => {
  it("rejects invalid options with a message naming the option", async () => {
    const cases: [object, RegExp][] = [
      [{ nodes: 0 }, /"nodes"/],
      [{ nodes: 1.5 }, /"nodes"/],
      [{ persistence: "rdb" }, /"persistence"/],
      [{ port: -1 }, /"port"/],
      [{ port: 65_535, nodes: 2 }, /"port"/],
      [{ maxBodyBytes: 0 }, /"maxBodyBytes"/],
      [{ host: "" }, /"host"/],
      [{ backend: "disk" }, /"backend"/],
      [{ bogus: 1 }, /unknown option "bogus"/],
    ];
    for (const [options, message] of cases) {
      const error = await startDevCluster(options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DevClusterError);
      expect((error as Error).message).toMatch(message);
    }
  });

  it("explains how to install redis-server when it is missing", async () => {
    for (const redisServer of ["/nonexistent/redis-server", "no-such-redis-server-binary"]) {
      const error = await startDevCluster({ redisServer }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisServerNotFoundError);
      expect((error as Error).message).toMatch(/apt-get install redis-server/);
      expect((error as Error).message).toMatch(/brew install redis/);
    }
  });

  it("puts node i on port + i", async () => {
    const port = await twoFreePorts();
    const cluster = await startDevCluster({ nodes: 2, port });
    try {
      expect(cluster.nodes.map((n) => n.url)).toEqual([
        `http://127.0.0.1:${port}`,
        `http://127.0.0.1:${port + 1}`,
      ]);
      expect(await new Redis(cluster.nodes[1] ?? { url: "", token: "" }).ping()).toBe("PONG");
      const pids = await Promise.all(cluster.controls.map((n) => redisServerPid(n.redisUrl)));
      expect(childRedisServerPids()).toEqual(expect.arrayContaining(pids)); // the leak probe sees them
    } finally {
      await cluster.stop();
    }
  });

  it("fails clearly on a port in use and leaves no redis-server behind", async () => {
    const port = await twoFreePorts();
    const blocker = await listen(port + 1);
    const before = new Set(childRedisServerPids());
    try {
      const error = await startDevCluster({ nodes: 2, port }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DevClusterError);
      expect((error as Error).message).toMatch(new RegExp(`node 1 .*${port + 1}.*EADDRINUSE`));
    } finally {
      await close(blocker);
    }
    const leaked = childRedisServerPids().filter((pid) => !before.has(pid) && isProcessAlive(pid));
    expect(leaked).toEqual([]);
  });
});
