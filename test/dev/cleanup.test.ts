// Nothing outlives a cluster: stop(), process exit, SIGTERM, and a SIGKILLed parent (watchdog).
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startDevCluster } from "../../src/dev/index";
import { eventually } from "../lock/helpers";
import { isProcessAlive, redisServerPid, waitForExit } from "../support/processes";

const fixture = fileURLToPath(new URL("./fixtures/child-cluster.ts", import.meta.url));

/** Spawns the fixture under Node with tsx's loader and reads its `{ pids }` line. */
async function startChild(
  mode: "exit" | "wait",
): Promise<{ child: ChildProcess; pids: number[]; dir: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", fixture, mode], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let buffered = "";
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    buffered += chunk.toString("utf8");
    const newline = buffered.indexOf("\n");
    if (newline >= 0) {
      const { pids, dir } = JSON.parse(buffered.slice(0, newline)) as {
        pids: number[];
        dir: string;
      };
      child.stdout?.resume();
      return { child, pids, dir };
    }
  }
  throw new Error("fixture exited without printing its PIDs");
}

describe("cleanup", () => {
  it("stop() kills every redis-server, is idempotent, and drops hung requests", async () => {
    const cluster = await startDevCluster({ nodes: 3, backend: "redis" });
    const pids = await Promise.all(cluster.controls.map((n) => redisServerPid(n.redisUrl)));
    expect(pids.every(isProcessAlive)).toBe(true);
    const [first] = cluster.controls;
    first?.inject({ kind: "hang" });
    const hung = fetch(first?.url ?? "", {
      method: "POST",
      headers: { authorization: `Bearer ${first?.token}` },
      body: '["ping"]',
    }).catch((e: unknown) => e);
    cluster.controls[1]?.pause(); // a stopped process must die too
    await new Promise((resolve) => setTimeout(resolve, 100));
    await Promise.all([cluster.stop(), cluster.stop()]);
    expect(pids.filter(isProcessAlive)).toEqual([]);
    expect(await hung).toBeInstanceOf(TypeError); // the hung socket was closed, not left open
    await cluster.stop();
  });

  it("a child process that exits leaves no redis-server behind", async () => {
    const { child, pids } = await startChild("exit");
    expect(pids).toHaveLength(2);
    await once(child, "exit");
    await waitForExit(pids);
  });

  it("a child process killed by SIGTERM leaves no redis-server behind", async () => {
    const { child, pids } = await startChild("wait");
    expect(pids.every(isProcessAlive)).toBe(true);
    child.kill("SIGTERM");
    const [, signal] = (await once(child, "exit")) as [number | null, string | null];
    expect(signal).toBe("SIGTERM"); // the default action is kept: it died of the signal
    await waitForExit(pids);
  });

  it("a child process killed by SIGKILL leaves no redis-server and no directory behind (watchdog)", async () => {
    const { child, pids, dir } = await startChild("wait");
    expect(dir).toMatch(/edgelock-dev-[^/]+$/);
    expect(existsSync(dir)).toBe(true);
    child.kill("SIGKILL");
    await once(child, "exit");
    await waitForExit(pids);
    await eventually(() => !existsSync(dir));
  });

  it("stop() and a process exit remove the temporary directory", async () => {
    const { child, dir } = await startChild("exit");
    await once(child, "exit");
    await eventually(() => !existsSync(dir));
  });
});
