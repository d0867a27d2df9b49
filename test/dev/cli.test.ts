// The `edgelock dev` CLI, spawned as a user would run it from a checkout.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { evenNote } from "../../src/dev/cli/dev";
import { uniqueKey } from "../support/dev-cluster";
import { parseInfoPid, waitForExit } from "../support/processes";

const CLI = "src/dev/cli.ts";
const PACKAGE_VERSION = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string })
  .version;

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

  it("SIGTERM to npm alone (`npx edgelock dev &` then `kill $!`) stops the CLI and its redis-servers", async () => {
    // npm runs `sh -c 'node bin/edgelock.mjs …'`; a SIGTERM to npm stops that shell and passes
    // nothing on, so the launcher and the CLI must notice on their own that their parent left.
    const child = spawn(
      "npm",
      ["exec", "--", "node", "bin/edgelock.mjs", "dev", "--json", "--nodes", "1"],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const lines = createInterface({ input: child.stdout });
    const [first] = (await once(lines, "line")) as [string];
    const [node] = (JSON.parse(first) as { nodes: { url: string; token: string }[] }).nodes;
    const res = await fetch(node?.url ?? "", {
      method: "POST",
      headers: { authorization: `Bearer ${node?.token}` },
      body: JSON.stringify(["info", "server"]),
    });
    const redisPid = parseInfoPid(((await res.json()) as { result: string }).result);
    const cliPids = spawnSync("pgrep", ["-f", "src/dev/cli.ts dev --json --nodes 1"], {
      encoding: "utf8",
    })
      .stdout.split("\n")
      .filter((line) => line !== "")
      .map(Number);
    expect(cliPids.length).toBeGreaterThan(0);
    child.kill("SIGTERM"); // npm's PID only, as `kill $!` sends it
    await waitForExit([redisPid, ...cliPids], 10_000);
  });

  it("--help, --version, and bad arguments: one line naming the problem, the usage, exit 2", () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ["--import", "tsx", CLI, ...args], { encoding: "utf8" });
    const help = run("--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: edgelock <command> \[options\]/);
    expect(help.stdout).toContain("inspect <key>");
    const devHelp = run("dev", "--help").stdout;
    expect(devHelp).toMatch(/^Usage: edgelock dev \[options\]/);
    expect(devHelp).toContain(
      "--memory             in-memory nodes, even with redis-server installed",
    );
    expect(devHelp).toContain("--redis              redis-server processes");
    expect(run("help").stdout).toBe(help.stdout);
    expect(run("help", "inspect").stdout).toMatch(/^Usage: edgelock inspect <key>… \[options\]/);
    for (const command of ["inspect", "force-release"]) {
      const usage = run(command, "--help").stdout;
      expect(usage).toContain("--prefix <p>");
      expect(usage).toContain("--nodes <file>");
    }
    expect(run("inspect", "--help").stdout).toContain("--json");
    expect(run("force-release", "--help").stdout).toContain("-y, --yes");
    const version = run("--version");
    expect([version.status, version.stdout]).toEqual([0, `${PACKAGE_VERSION}\n`]);
    const cases: [string[], string][] = [
      [["dev", "--bogus"], 'unknown option "--bogus"'],
      [["dev", "--nodes", "abc"], '--nodes must be an integer from 1 to 64, got "abc"'],
      [["dev", "--nodes", "0"], '--nodes must be an integer from 1 to 64, got "0"'],
      [["dev", "--nodes"], 'option "--nodes" needs a value'],
      [["dev", "extra"], 'unexpected argument "extra"'],
      [["serve"], 'unknown command "serve"'],
      [["help", "serve"], 'unknown command "serve"'],
      [[], "missing command"],
    ];
    for (const [args, message] of cases) {
      const bad = run(...args);
      expect(bad.status, args.join(" ")).toBe(2);
      expect(bad.stderr.split("\n")[0]).toBe(`edgelock: ${message}`);
      expect(bad.stderr).toContain("Usage: edgelock");
      expect(bad.stderr).not.toMatch(/positional|TypeError|at .*\.ts:/);
    }
  });

  it("warns on an even node count", () => {
    expect(evenNote(3)).toBeUndefined();
    expect(evenNote(4)).toBe(
      "note: 4 nodes need a majority of 3, so they tolerate 1 failed node(s), no more than 3 nodes would; prefer an odd number",
    );
  });

  it("the bin launcher runs the CLI's source in a checkout (never a stale build)", () => {
    const bin = spawnSync(process.execPath, ["bin/edgelock.mjs", "--version"], {
      encoding: "utf8",
    });
    expect([bin.status, bin.stdout]).toEqual([0, `${PACKAGE_VERSION}\n`]);
  });
});
