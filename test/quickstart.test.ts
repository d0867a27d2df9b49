/**
 * The README's samples, run as a newcomer runs them, from the packed tarball in empty folders.
 *
 * The Quick start: after `npm init -y`, the shell lines of its ```sh block as written (install,
 * `npx edgelock dev`), then the `export EDGELOCK_NODES='…'` line the CLI printed, and its sample
 * saved as the file it names and run with the command it gives. Both blocks are read from
 * README.md, so the test breaks when the README does. The newcomer has neither `redis-server`
 * (hidden from PATH) nor `ioredis`: the nodes run in memory and the CLI says so. Then, in the same
 * folder, the same CLI finds `redis-server` (without ioredis: still memory, saying why; with
 * ioredis installed: real servers). Then every other sample that names its file (below).
 *
 * Offline: `npm install` talks to a registry served by this test on 127.0.0.1 (./support/registry.ts),
 * which holds the packed tarball of this package (built with the project's tsup configuration into
 * a staging folder, packed with `npm pack`) once per run, and `npm pack` of `@upstash/redis`, `hono`,
 * `@hono/node-server`, `ioredis` and their dependencies as the project's own node_modules has them. npm runs with a
 * private cache.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
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
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Redis } from "@upstash/redis";
import { build, type Options } from "tsup";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import config from "../tsup.config";
import {
  curlsAfter,
  freePort,
  type RunnableSample,
  runnableSamples,
  start,
  tomlOf,
  vitestExamples,
  waitFor,
} from "./docs/run";
import { allSamples, extractSamples } from "./docs/samples";
import { pathWithoutRedis } from "./support/hidden-redis";
import { waitForExit } from "./support/processes";
import { closure, descendants, pack, serveRegistry } from "./support/registry";

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
  const folders = closure([
    "@upstash/redis",
    "hono",
    "@hono/node-server",
    "ioredis",
    ...Object.keys(dependencies),
  ]);
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
    expect(shell).toHaveLength(2);
    const [installLine = "", devLine = ""] = shell.map(withoutComment);
    // The runner is installed as the README says; the test runs the project's own tsx instead of
    // packing esbuild's binaries into its registry (same version: package.json's devDependency).
    expect(installLine).toBe(
      "npm init -y && npm install edgelock @upstash/redis && npm install --save-dev tsx",
    );
    const install = installLine.replace(" && npm install --save-dev tsx", "");
    expect(install).not.toContain("ioredis");
    expect(devLine).toBe("npx edgelock dev");

    const app = join(work, "app");
    mkdirSync(app);
    await sh(install, app, hidden.path);
    // What `npm init -y` writes on npm ≥ 11: the sample is an .mts file for that reason.
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
      // The `export EDGELOCK_NODES='…'` line it prints, ready to paste.
      let exportLine = "";
      for (let i = 0; i < 20 && exportLine === ""; i++) {
        const line = await next();
        if (line.trimStart().startsWith("export EDGELOCK_NODES=")) exportLine = line.trim();
      }
      expect(exportLine).toBe(`export EDGELOCK_NODES='${JSON.stringify(nodes)}'`);

      // The sample as printed, saved under the name its first line gives, run with its command.
      const header = /^\/\/ (\S+) — run: (npx tsx \S+)$/.exec(sample.code.split("\n")[0] ?? "");
      expect(header?.[1]).toBe("quickstart.mts");
      expect(header?.[2]).toBe("npx tsx quickstart.mts");
      expect(sample.prelude).toBe("");
      writeFileSync(join(app, "quickstart.mts"), sample.code);
      const run = spawn("sh", ["-c", `${exportLine} && exec tsx quickstart.mts`], {
        cwd: app,
        env: { PATH: `${join(MODULES, ".bin")}:${hidden.path}`, HOME: process.env.HOME ?? app },
      });
      let out = "";
      let runErr = "";
      run.stdout.on("data", (chunk) => {
        out += String(chunk);
      });
      run.stderr.on("data", (chunk) => {
        runErr += String(chunk);
      });
      const [code] = (await once(run, "exit")) as [number | null];
      expect(code, runErr).toBe(0);
      expect(out).toMatch(
        /^charging invoice 42\ncharged under lock invoice:42, valid until \d{4}-\d\d-\d\dT[\d:.]+Z\nreleased\n$/,
      );
      // Released on every node.
      const left = await Promise.all(
        nodes.map((node) =>
          new Redis({ ...node, automaticDeserialization: false }).get("lock:invoice:42"),
        ),
      );
      expect(left).toEqual([null, null, null]);

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

/**
 * Every sample of README.md and docs/*.md that names its file, saved under that name in one
 * project that installed the packed tarball (the README's Node server install line) and run with
 * the command it gives: Node samples under tsx, Hono servers under Node, Bun and Deno (requests
 * sent, then stopped), Workers under `wrangler dev` (a request, or the README's two cron deliveries).
 * One `edgelock dev` in memory serves them all, as the README tells a reader to start it. Runners
 * come from this project's devDependencies, first on PATH (the README installs the same ones with
 * `npm install --save-dev`; `npx tsx` and `npx wrangler` run as `tsx` and `wrangler`).
 */
describe("every sample that names its file runs as it says, from the packed tarball", () => {
  const BIN = join(MODULES, ".bin");
  /** What the README's Node server installs: a superset of what every other sample needs. */
  const INSTALL = "npm install edgelock @upstash/redis hono @hono/node-server";
  const samples = runnableSamples();
  let project = "";
  let dev: ReturnType<typeof startDev> | undefined;
  let exportLine = "";
  let devVars = "";
  let nodes: { url: string; token: string }[] = [];

  beforeAll(async () => {
    project = join(work, "samples");
    mkdirSync(project);
    await sh("npm init -y", project, hidden.path);
    await sh(INSTALL, project, hidden.path);
    dev = startDev(project, hidden.path, ["--memory"]);
    nodes = (JSON.parse(await dev.next()) as { nodes: typeof nodes }).nodes;
    for (let i = 0; i < 30 && (exportLine === "" || devVars === ""); i++) {
      const line = await dev.next();
      if (line.trimStart().startsWith("export EDGELOCK_NODES=")) exportLine = line.trim();
      if (line.includes("put this line in .dev.vars")) devVars = (await dev.next()).trim();
    }
  }, 120_000);

  afterAll(async () => {
    if (dev !== undefined) await stopDev(dev.dev);
  });

  /** The environment of a run: the project's runners first, loopback only, no telemetry. */
  const env = (): NodeJS.ProcessEnv => ({
    PATH: `${BIN}:${hidden.path}`,
    HOME: process.env.HOME ?? project,
    // npm's registry setting also points wrangler's update check at the local registry.
    ...npmEnv,
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_SEND_METRICS: "false",
    // docs/DETAILS.md's clients sample lists its three databases by name.
    ...Object.fromEntries(
      ["A", "B", "C"].flatMap((name, i) => [
        [`REDIS_${name}_URL`, nodes[i]?.url ?? ""],
        [`REDIS_${name}_TOKEN`, nodes[i]?.token ?? ""],
      ]),
    ),
  });

  const save = (file: string, text: string): void => {
    mkdirSync(dirname(join(project, file)), { recursive: true });
    writeFileSync(join(project, file), text);
  };

  it("the samples that name no file are vitest files (run below with `npx vitest run`)", () => {
    const named = new Set(samples.map((s) => `${s.sample.file}:${s.sample.line}`));
    const unnamed = allSamples()
      .filter((s) => !named.has(`${s.file}:${s.line}`))
      .map((s) => `${s.file}: ${s.code.split("\n")[0]}`);
    expect(unnamed).toEqual([
      // The vitest files of docs/TESTING-HANDLERS.md (identical to edgelock's own, by
      // test/docs/examples.test.ts).
      'docs/TESTING-HANDLERS.md: import { Hono } from "hono";',
      'docs/TESTING-HANDLERS.md: import { describe, expect, it } from "vitest";',
    ]);
  });

  /** What each Node sample prints, by the file it names. */
  const PRINTS: Record<string, RegExp> = {
    "quickstart.mts":
      /^charging invoice 42\ncharged under lock invoice:42, valid until \S+Z\nreleased\n$/,
    "handler.mts": /^charging invoice 42\n\{ charged: '42' \}\n$/,
    // docs/IDEMPOTENCY.md: the same file name; the handler runs once, the retry is a replay.
    "docs/IDEMPOTENCY.md handler.mts":
      /^chargeCard: \{\}\n\{\n {2}statusCode: 201,[\s\S]*?\}\n\{\n {2}statusCode: 201,[\s\S]*'idempotency-replayed': 'true'[\s\S]*\}\n$/,
    "locks.test.mts": /^10000\n-2\n$/,
    "report.mts": /^\{ queued: '7' \}\nreport 7 built\n$/,
    "transfer.mts":
      /^moved (10 from account 1 to account 2|5 from account 2 to account 1)\nmoved (10 from account 1 to account 2|5 from account 2 to account 1)\n$/,
    "docs/DETAILS.md clients.mts": /^chargeInvoice: 42\n$/,
    "cluster.test.mts": /^\{ requests: \d+, commands: \{.*\} \}\n$/,
    // The semaphore's burst: six callers, three permits, counted by the sample itself.
    "limit.mts": /^6 answers, at most 3 at once\n$/,
    "generate.mts": /^callTheModel: "hi"\n\{ answered: 'hi' \}\n$/,
  };

  /** A Hono server on Node: it serves until stopped, so it is run like the Bun and Deno ones. */
  const isNodeServer = (s: RunnableSample) => s.source.includes('from "@hono/node-server"');

  /**
   * POSTs `path` twice (one Idempotency-Key) to a started server; both answer 2xx with a JSON
   * object, the second a replay where the server uses `idempotency()`. The two bodies.
   */
  async function postTwice(port: number, path: string, source: string, where: () => string) {
    const key = `sample-${crypto.randomUUID()}`;
    const post = () =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method: "POST",
        headers: { "idempotency-key": key },
      });
    const first = await post();
    expect(first.status, where()).toBeLessThan(300);
    const firstBody: unknown = await first.json();
    expect(firstBody, where()).toBeTypeOf("object");
    const second = await post();
    expect(second.status, where()).toBeLessThan(300);
    if (source.includes("idempotency(")) {
      expect(second.headers.get("idempotency-replayed"), where()).toBe("true");
    }
    return [firstBody, (await second.json()) as unknown];
  }

  it("Node samples: `npx tsx <file>` (or the `tsx -e` line a Lambda handler gives) prints what it says", async () => {
    const node = samples.filter((s) => s.command?.startsWith("npx tsx") && !isNodeServer(s));
    const nameOf = (s: RunnableSample) =>
      s.sample.file === "README.md" ? s.file : `${s.sample.file} ${s.file}`;
    expect(node.map(nameOf).sort()).toEqual(
      Object.keys(PRINTS)
        .map((k) => k.replace(/^README\.md /, ""))
        .sort(),
    );
    // Every sample that gives a command is run by one of the tests of this block.
    const ran = (s: RunnableSample) =>
      s.command?.startsWith("npx tsx") ||
      s.command === "bun server.ts" ||
      s.command === "npx wrangler dev";
    expect(samples.filter((s) => !ran(s)).map((s) => `${s.sample.file}:${s.sample.line}`)).toEqual(
      [],
    );
    for (const runnable of node) {
      const { file, command, source, sample } = runnable;
      save(file, source);
      // `npx tsx` installs nothing here: the runner is the project's (first on PATH).
      const run = start(`${exportLine} && ${command?.replace(/^npx /, "")}`, project, env());
      const [code] = (await once(run.child, "close")) as [number | null];
      const where = `${sample.file}:${sample.line} (${file}) with ${exportLine.slice(0, 30)}…\n${run.output()}`;
      expect(code, where).toBe(0);
      expect(run.output(), where).toMatch(PRINTS[nameOf(runnable)] ?? /$^/);
    }
  }, 120_000);

  it("Hono servers run on Bun and on Deno: `bun server.ts`, `deno serve … server.ts`; each answers its route", async () => {
    const servers = samples.filter((s) => s.command === "bun server.ts");
    expect(servers.length).toBeGreaterThanOrEqual(3);
    for (const { file, source, sample } of servers) {
      save(file, source);
      const route = /app\.post\(\s*"([^"]+)"/.exec(source)?.[1] ?? "";
      const path = route.replace(":id", "42").replace(":from", "1").replace(":to", "2");
      const deno = /or: (deno serve .*?--port )3000( server\.ts)/.exec(
        sample.code.split("\n")[0] ?? "",
      );
      expect(deno, `${sample.file}:${sample.line} gives the Deno command`).not.toBeNull();
      for (const runtime of ["bun", "deno"]) {
        const port = await freePort();
        const line =
          runtime === "bun"
            ? `${exportLine} && PORT=${port} bun ${file}`
            : `${exportLine} && ${deno?.[1]}${port}${deno?.[2]}`;
        const server = start(line, project, env());
        try {
          await waitFor(server, new RegExp(`:${port}`));
          await postTwice(
            port,
            path,
            source,
            () => `${sample.file}:${sample.line} on ${runtime}\n${server.output()}`,
          );
        } finally {
          await server.stop();
        }
      }
    }
  }, 120_000);

  it("the Hono server on Node: `npx tsx node-server.mts` (@hono/node-server, installed with the README's line) answers its route twice", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    // The install line this project ran is the one the README gives next to the sample.
    expect(readme).toContain(`\`${INSTALL} && npm install --save-dev tsx\``);
    const servers = samples.filter(isNodeServer);
    expect(servers.map((s) => `${s.sample.file} ${s.command}`)).toEqual([
      "README.md npx tsx node-server.mts",
    ]);
    for (const { file, source, sample, command } of servers) {
      save(file, source);
      const port = await freePort();
      const server = start(
        `${exportLine} && PORT=${port} ${command?.replace(/^npx /, "")}`,
        project,
        env(),
      );
      const where = () => `${sample.file}:${sample.line} (${file})\n${server.output()}`;
      try {
        await waitFor(server, new RegExp(`listening on http://localhost:${port}`));
        expect(await postTwice(port, "/invoices/42/charge", source, where)).toEqual([
          { charged: "42" },
          { charged: "42" },
        ]);
      } finally {
        await server.stop();
      }
    }
  }, 60_000);

  it("the vitest files of docs/TESTING-HANDLERS.md pass in the project with `npx vitest run`", async () => {
    const doc = readFileSync(join(ROOT, "docs/TESTING-HANDLERS.md"), "utf8");
    const commands = (/```sh\n([\s\S]*?)```/.exec(doc)?.[1] ?? "")
      .split("\n")
      .map(withoutComment)
      .filter((line) => line !== "");
    expect(commands).toEqual(["npm install --save-dev vitest", "npx vitest run"]);
    const examples = vitestExamples(doc);
    const files = examples.map(([path, block]) => {
      save(basename(path), `${block}\n`);
      return basename(path);
    });
    expect(files).toEqual(["example-hono.test.ts", "example-lambda.test.ts"]);
    const tests = examples.reduce(
      (n, [, block]) => n + (block.match(/^\s*it\(/gm)?.length ?? 0),
      0,
    );
    expect(tests).toBeGreaterThan(0);
    // `npx vitest run` names the two files: this project also holds the README's `*.test.mts`
    // scripts, which run under tsx and are not vitest files. vitest is the runner first on PATH
    // (as tsx is); the files' `edgelock`, `edgelock/hono`, … and `hono` resolve from the project.
    const run = start(`vitest run ${files.join(" ")}`, project, { ...env(), NO_COLOR: "1" });
    const [code] = (await once(run.child, "close")) as [number | null];
    expect(code, run.output()).toBe(0);
    expect(run.output()).toMatch(/Test Files {2}2 passed \(2\)/);
    expect(run.output()).toMatch(new RegExp(`Tests {2}${tests} passed \\(${tests}\\)`));
  }, 60_000);

  it("Workers samples run under `wrangler dev` with the section's wrangler.toml; the cron one skips the same time twice and says so", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const workers = samples.filter((s) => s.command === "npx wrangler dev");
    expect(workers).toHaveLength(3);
    save(".dev.vars", `${devVars}\n`);
    for (const { file, source, sample, command } of workers) {
      save(file, source);
      save("wrangler.toml", tomlOf(sample, readme));
      const port = await freePort();
      const wrangler = start(
        `${command?.replace(/^npx /, "")} --port ${port} --inspector-port 0`,
        project,
        env(),
      );
      const where = () => `${sample.file}:${sample.line}\n${wrangler.output()}`;
      try {
        await waitFor(wrangler, /Ready on http:\/\/localhost:\d+/, 60_000);
        const curls = curlsAfter(sample, readme);
        if (curls.length === 0) {
          const route = /app\.post\(\s*"([^"]+)"/.exec(source)?.[1] ?? "";
          const response = await fetch(`http://127.0.0.1:${port}${route.replace(":id", "42")}`, {
            method: "POST",
          });
          // The lock route answers what it charged; the limit route what it rendered.
          const answer = route.startsWith("/reports") ? { rendered: "42" } : { charged: "42" };
          expect(await response.json(), where()).toEqual(answer);
          continue;
        }
        // The README's two deliveries of one scheduled time, as written (port aside).
        expect(curls).toHaveLength(2);
        expect(curls[0]).toBe(curls[1]);
        const url = (curls[0] ?? "").replace("localhost:8787", `127.0.0.1:${port}`);
        expect((await fetch(url)).status, where()).toBe(200);
        await waitFor(wrangler, /digest sent/);
        expect((await fetch(url)).status, where()).toBe(200);
        await waitFor(
          wrangler,
          /edgelock: skipped scheduled job "scheduled:daily-digest:0 3 \* \* \*:1767236400000": it already ran \(its done marker stays \d+ s more\)/,
        );
        expect(wrangler.output().match(/digest sent/g), where()).toHaveLength(1);
      } finally {
        await wrangler.stop();
      }
    }
  }, 180_000);
});
