// The `edgelock dev` CLI, spawned as a user would run it from a checkout.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { uniqueKey } from "../support/dev-cluster";
import { parseInfoPid, waitForExit } from "../support/processes";

const CLI = "src/dev/cli.ts";

describe("edgelock dev", () => {
  it("prints the nodes as one JSON line, serves them, and stops everything on SIGTERM", async () => {
    // Detached = its own process group, like a job in a terminal. The SIGTERM goes to the whole
    // group (as Ctrl-C would): npm 11 runs `sh -c tsx …` and does not forward a signal sent to npx
    // alone. redis-server runs in a group of its own, so only the CLI's handlers can stop it.
    const child = spawn("npx", ["tsx", CLI, "dev", "--json", "--nodes", "2"], {
      stdio: ["ignore", "pipe", "inherit"],
      detached: true,
    });
    const lines = createInterface({ input: child.stdout });
    const [first] = (await once(lines, "line")) as [string];
    const { nodes } = JSON.parse(first) as { nodes: { url: string; token: string }[] };
    expect(nodes).toHaveLength(2);
    const pids: number[] = [];
    for (const node of nodes) {
      const redis = new Redis(node);
      const key = uniqueKey("cli");
      expect(await redis.set(key, "v")).toBe("OK");
      expect(await redis.get(key)).toBe("v");
      const res = await fetch(node.url, {
        method: "POST",
        headers: { authorization: `Bearer ${node.token}` },
        body: JSON.stringify(["info", "server"]),
      });
      pids.push(parseInfoPid(((await res.json()) as { result: string }).result));
    }
    const more: string[] = [];
    lines.on("line", (line) => more.push(line));
    process.kill(-(child.pid ?? 0), "SIGTERM");
    const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
    expect(code === 0 || signal === "SIGTERM").toBe(true);
    await waitForExit(pids);
    expect(more).toEqual([]); // --json: nothing but the first line
  });

  it("prints usage for --help and exits 2 on bad arguments", () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ["--import", "tsx", CLI, ...args], { encoding: "utf8" });
    const help = run("--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/Usage: edgelock dev/);
    for (const args of [["dev", "--nodes", "x"], ["serve"], ["dev", "--bogus"], []]) {
      const bad = run(...args);
      expect(bad.status, args.join(" ")).toBe(2);
      expect(bad.stderr).toMatch(/^edgelock: /);
    }
    expect(run("dev", "--nodes", "0").status).toBe(2);
  });
});
