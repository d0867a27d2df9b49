/**
 * The README's Quick start, run as a newcomer runs it: in an empty folder after `npm init -y`, the
 * shell lines of its ```sh block as written (install, `npx edgelock dev`, `export EDGELOCK_NODES=…`
 * with the first line the CLI printed pasted between the quotes), then its TypeScript sample with a
 * stub `chargeInvoice`. Both blocks are read from README.md, so the test breaks when the README does.
 * The newcomer has neither `redis-server` (hidden from PATH) nor `ioredis`: the nodes run in memory
 * and the CLI says so. Then, in the same folder, the same CLI finds `redis-server` (without ioredis:
 * still memory, saying why; with ioredis installed: real servers).
 *
 * Offline: `npm install` talks to a registry served by this test on 127.0.0.1, which holds the
 * packed tarball of this package (built with the project's tsup configuration into a staging
 * folder, packed with `npm pack`) and `npm pack` of `@upstash/redis`, `ioredis` and their
 * dependencies as the project's own node_modules has them. npm runs with a private cache.
 */
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Redis } from "@upstash/redis";
import { build, type Options } from "tsup";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import config from "../tsup.config";
import { extractSamples } from "./docs/samples";
import { pathWithoutRedis } from "./support/hidden-redis";
import { waitForExit } from "./support/processes";

const ROOT = resolve(".");
const MODULES = join(ROOT, "node_modules");

/** The Quick start section of README.md: its shell lines and its TypeScript sample. */
function quickStart(): {
  prerequisites: string;
  shell: string[];
  sample: { code: string; prelude: string };
} {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("\n## Quick start\n");
  if (start === -1) throw new Error("README.md has no '## Quick start' section");
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  const sh = /```sh\n([\s\S]*?)```/.exec(section);
  if (sh === null) throw new Error("the Quick start has no ```sh block");
  const shell = (sh[1] ?? "").split("\n").filter((line) => line.trim() !== "");
  const [sample] = extractSamples("README.md", section);
  if (sample === undefined) throw new Error("the Quick start has no ```ts sample");
  // Everything the README says before the commands: its Prerequisites section and the Quick start's words.
  return { prerequisites: readme.slice(0, start + sh.index), shell, sample };
}

/** A shell line without its trailing `# comment`. */
const withoutComment = (line: string): string => line.replace(/\s+#\s.*$/, "").trim();

interface Packed {
  readonly name: string;
  readonly version: string;
  readonly filename: string;
  readonly integrity: string;
  readonly shasum: string;
}

/** `npm pack` of folders into `into`; what npm reports for each. */
function pack(folders: string[], into: string, cwd = ROOT): Packed[] {
  const out = execFileSync(
    "npm",
    ["pack", "--json", "--ignore-scripts", "--pack-destination", into, ...folders],
    { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  return JSON.parse(out) as Packed[];
}

/** Where Node would find package `name` from `dir` (nested node_modules first, then hoisted). */
function locate(name: string, dir: string): string | undefined {
  for (let at = dir; at.startsWith(MODULES); at = dirname(at)) {
    const candidate = join(at, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
  }
  const hoisted = join(MODULES, name);
  return existsSync(join(hoisted, "package.json")) ? hoisted : undefined;
}

/** The installed folders of `names` and of everything they depend on, as node_modules has them. */
function closure(names: string[]): string[] {
  const seen = new Set<string>();
  const visit = (name: string, from: string, optional: boolean): void => {
    const folder = locate(name, from);
    if (folder === undefined) {
      if (optional) return;
      throw new Error(`${name} is not in node_modules (needed offline by the Quick start test)`);
    }
    if (seen.has(folder)) return;
    seen.add(folder);
    const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep, folder, false);
    for (const dep of Object.keys(manifest.optionalDependencies ?? {})) visit(dep, folder, true);
    for (const dep of Object.keys(manifest.peerDependencies ?? {})) {
      visit(dep, folder, manifest.peerDependenciesMeta?.[dep]?.optional === true);
    }
  };
  for (const name of names) visit(name, MODULES, false);
  return [...seen];
}

/** A read-only npm registry of the given tarballs: packuments by name, tarballs by file name. */
async function serveRegistry(dir: string, packed: Packed[], manifests: Map<string, object>) {
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent((request.url ?? "/").split("?")[0] ?? "/").slice(1);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tarball = packed.find((p) => path === `-/${p.filename}`);
    if (tarball !== undefined) {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      response.end(readFileSync(join(dir, tarball.filename)));
      return;
    }
    const versions = packed.filter((p) => p.name === path);
    if (versions.length === 0) {
      response.writeHead(404, { "content-type": "application/json" });
      response.end('{"error":"not found"}');
      return;
    }
    const packument = {
      name: path,
      "dist-tags": { latest: versions.at(-1)?.version },
      versions: Object.fromEntries(
        versions.map((p) => [
          p.version,
          {
            ...manifests.get(`${p.name}@${p.version}`),
            dist: {
              tarball: `${base}/-/${p.filename}`,
              integrity: p.integrity,
              shasum: p.shasum,
            },
          },
        ]),
      ),
    };
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(packument));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return server;
}

/** Every live descendant of `pid` (from /proc), with its command name. */
function descendants(pid: number): { pid: number; comm: string }[] {
  const children = new Map<number, { pid: number; comm: string }[]>();
  for (const entry of execFileSync("ps", ["-e", "-o", "pid=,ppid=,comm="], { encoding: "utf8" })
    .trim()
    .split("\n")) {
    const [child, parent, comm = ""] = entry.trim().split(/\s+/);
    const list = children.get(Number(parent)) ?? [];
    list.push({ pid: Number(child), comm });
    children.set(Number(parent), list);
  }
  const found: { pid: number; comm: string }[] = [];
  const walk = (at: number): void => {
    for (const child of children.get(at) ?? []) {
      found.push(child);
      walk(child.pid);
    }
  };
  walk(pid);
  return found;
}

let work = "";
let registry: Server | undefined;
let npmEnv: Record<string, string> = {};

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "edgelock-quickstart-"));
  const stage = join(work, "stage");
  const tarballs = join(work, "registry");
  mkdirSync(stage);
  mkdirSync(tarballs);
  // The package as `npm pack` would make it, built outside dist/ (other tests rebuild and clean
  // dist/ concurrently): both tsup builds, types left out (nothing here reads them).
  for (const file of ["package.json", "README.md", "LICENSE"]) {
    cpSync(join(ROOT, file), join(stage, file));
  }
  cpSync(join(ROOT, "bin"), join(stage, "bin"), { recursive: true });
  const [library, cli] = config as Options[];
  const outDir = join(stage, "dist");
  await build({ ...library, config: false, outDir, dts: false, silent: true });
  await build({ ...cli, config: false, outDir, silent: true });

  const manifests = new Map<string, object>();
  // The peers the README installs, ioredis (installed later), and edgelock's own dependencies.
  const { dependencies = {} } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  const folders = closure(["@upstash/redis", "ioredis", ...Object.keys(dependencies)]);
  for (const folder of [stage, ...folders]) {
    const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as {
      name: string;
      version: string;
    };
    manifests.set(`${manifest.name}@${manifest.version}`, manifest);
  }
  const packed = [...pack(["."], tarballs, stage), ...pack(folders, tarballs)];
  registry = await serveRegistry(tarballs, packed, manifests);
  npmEnv = {
    npm_config_registry: `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`,
    npm_config_cache: join(work, "npm-cache"),
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    npm_config_loglevel: "error",
  };
}, 180_000);

afterAll(async () => {
  registry?.close();
  if (work !== "") rmSync(work, { recursive: true, force: true });
});

/**
 * Runs a shell line in `cwd`, asynchronously: the registry answers from this process meanwhile.
 * Rejects with its stderr unless it exits 0.
 */
async function sh(line: string, cwd: string, path = process.env.PATH ?? ""): Promise<void> {
  const child = spawn("sh", ["-c", line], {
    cwd,
    env: { ...process.env, ...npmEnv, PATH: path },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`\`${line}\` exited with ${code}:\n${stderr}`);
}

/** `npx edgelock dev` in `cwd`, with `path` as PATH; its stdout lines. */
function startDev(cwd: string, path: string, args: string[] = []) {
  const dev: ChildProcessWithoutNullStreams = spawn("npx", ["edgelock", "dev", ...args], {
    cwd,
    env: { ...process.env, ...npmEnv, PATH: path },
  });
  let stderr = "";
  dev.stderr.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const lines = createInterface({ input: dev.stdout })[Symbol.asyncIterator]();
  /** The next line; throws with stderr when the output ended. */
  const next = async (): Promise<string> => {
    const line = await lines.next();
    if (line.done === true) throw new Error(`edgelock dev printed no more; stderr:\n${stderr}`);
    return line.value;
  };
  return { dev, next, stderr: () => stderr };
}

/** SIGTERM to npx alone (`kill $!`); resolves once the CLI and everything it started are gone. */
async function stopDev(dev: ChildProcessWithoutNullStreams, more: number[] = []): Promise<void> {
  const tree = descendants(dev.pid ?? 0).map((p) => p.pid);
  dev.kill("SIGTERM");
  await once(dev, "exit");
  await waitForExit([...tree, ...more], 10_000);
}

const hidden = pathWithoutRedis();
afterAll(() => hidden.remove());

describe("the README's Quick start, from the packed tarball in an empty folder", () => {
  it("without redis-server and ioredis: installs, runs in memory and says so, runs the sample under the lock, stops leaving nothing", async () => {
    const { prerequisites, shell, sample } = quickStart();
    // What the commands need is said before them: the Node version of `engines`, redis-server.
    const { engines } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      engines: { node: string };
    };
    expect(prerequisites).toContain(`Node.js ${engines.node.replace(">=", "≥ ")}`);
    // redis-server is optional, and said to be.
    expect(prerequisites).toMatch(
      /runs its nodes in memory when `redis-server`\s+is not installed/,
    );
    expect(shell).toHaveLength(3);
    const [install = "", devLine = "", exportLine = ""] = shell.map(withoutComment);
    expect(install).toMatch(/^npm install edgelock /);
    expect(install).not.toContain("ioredis");
    expect(devLine).toBe("npx edgelock dev");
    expect(exportLine).toBe(`export EDGELOCK_NODES='{"nodes":[…]}'`);

    const app = join(work, "app");
    mkdirSync(app);
    await sh("npm init -y", app, hidden.path);
    await sh(install, app, hidden.path);
    expect(existsSync(join(app, "node_modules", "ioredis"))).toBe(false);
    // `npx edgelock dev`, started as `npx edgelock dev &` would: SIGTERM goes to npx's PID.
    expect(devLine.split(/\s+/)).toEqual(["npx", "edgelock", "dev"]);
    const { dev, next } = startDev(app, hidden.path);
    try {
      const printed = await next();
      const { nodes } = JSON.parse(printed) as { nodes: { url: string; token: string }[] };
      expect(nodes).toHaveLength(3);
      expect([await next(), await next()]).toEqual([
        "",
        "edgelock dev: 3 node(s) running in memory (no redis-server found on PATH). Ctrl-C stops them.",
      ]);
      expect(descendants(dev.pid ?? 0).filter((p) => p.comm === "redis-server")).toEqual([]);

      // The sample, types stripped by the project's TypeScript, after a stub chargeInvoice that
      // says when it runs and waits for the test to look at the nodes.
      const stub = [
        'import { createInterface as __lines } from "node:readline";',
        "const __input = __lines({ input: process.stdin })[Symbol.asyncIterator]();",
        "async function chargeInvoice(id, { signal }) {",
        "  console.log(JSON.stringify({ charging: id, aborted: signal.aborted }));",
        "  await __input.next();",
        "}",
      ].join("\n");
      const js = ts.transpileModule(`${sample.prelude}\n${sample.code}`, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      writeFileSync(
        join(app, "quickstart.mjs"),
        `${stub}\n${js}\nprocess.stdin.destroy();\nconsole.log(JSON.stringify({ done: true }));\n`,
      );

      // The export line as written, with the printed line pasted between its quotes.
      const pasted = exportLine.replace(`{"nodes":[…]}`, printed);
      const run = spawn("sh", ["-c", `${pasted} && exec node quickstart.mjs`], {
        cwd: app,
        env: { PATH: hidden.path, HOME: process.env.HOME ?? app },
      });
      let runErr = "";
      run.stderr.on("data", (chunk) => {
        runErr += String(chunk);
      });
      const out = createInterface({ input: run.stdout })[Symbol.asyncIterator]();
      const charging = await out.next();
      if (charging.done === true) throw new Error(`the sample ended early; stderr:\n${runErr}`);
      expect(JSON.parse(charging.value)).toEqual({ charging: 42, aborted: false });
      // Inside fn: every node holds the same fresh token for the sample's key (default prefix).
      const read = () =>
        Promise.all(
          nodes.map((node) =>
            new Redis({ ...node, automaticDeserialization: false }).get("lock:invoice:42"),
          ),
        );
      const held = await read();
      expect(held[0]).toMatch(/^[0-9a-f]{32}$/);
      expect(held).toEqual(Array(3).fill(held[0]));
      run.stdin.write("\n");
      expect(JSON.parse((await out.next()).value as string)).toEqual({ done: true });
      const [code] = (await once(run, "exit")) as [number | null];
      expect(code, runErr).toBe(0);
      // Released on every node.
      expect(await Promise.all(nodes.map((node) => new Redis(node).get("invoice:42")))).toEqual([
        null,
        null,
        null,
      ]);

      // `kill $!`: SIGTERM to npx alone; the CLI stops.
      await stopDev(dev);
    } finally {
      if (dev.exitCode === null && dev.signalCode === null) dev.kill("SIGKILL");
    }

    // The same folder on a machine with redis-server: without ioredis still in memory, saying why;
    // once ioredis is installed, on real servers.
    const plain = process.env.PATH ?? "";
    const noClient = startDev(app, plain, ["--json"]);
    try {
      expect(JSON.parse(await noClient.next())).toMatchObject({ nodes: expect.any(Array) });
      await expect
        .poll(noClient.stderr)
        .toBe("edgelock dev: 3 node(s) in memory (ioredis is not installed)\n");
      await stopDev(noClient.dev);
    } finally {
      if (noClient.dev.exitCode === null) noClient.dev.kill("SIGKILL");
    }
    await sh("npm install -D ioredis", app, plain);
    const real = startDev(app, plain);
    try {
      const { nodes } = JSON.parse(await real.next()) as {
        nodes: { url: string; token: string }[];
      };
      expect([await real.next(), await real.next()]).toEqual([
        "",
        "edgelock dev: 3 node(s) running on redis-server (found on PATH). Ctrl-C stops them.",
      ]);
      const servers = descendants(real.dev.pid ?? 0).filter((p) => p.comm === "redis-server");
      expect(servers).toHaveLength(3);
      const [first] = nodes;
      const redis = new Redis({ url: first?.url ?? "", token: first?.token ?? "" });
      expect(await redis.set("quickstart", "real")).toBe("OK");
      expect(await redis.get("quickstart")).toBe("real");
      await stopDev(
        real.dev,
        servers.map((s) => s.pid),
      );
    } finally {
      if (real.dev.exitCode === null) real.dev.kill("SIGKILL");
    }
  }, 240_000);
});
