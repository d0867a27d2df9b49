/**
 * Bun and Deno, as the README claims them: the Quick start and an acquire / extend / release /
 * `using` cycle, run by each runtime's own binary (the registry's `bun` and `deno` packages, pinned
 * in devDependencies) against a real dev cluster. The package is built with the project's tsup
 * configuration into a fresh project's node_modules, next to `@upstash/redis`, as
 * `npm install edgelock @upstash/redis` leaves it; the script imports `edgelock` by name.
 * Node runs the same script first, so a failure on Bun or Deno is theirs. Each runtime also runs a
 * lock's cycle on the memory nodes of `edgelock/testing` (`fixtures/memory.mjs`).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { build, type Options } from "tsup";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import config from "../../tsup.config";
import { eventually, pttlBack, readBack, uniquePrefix } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";

const N = 3;
const dev = useDevCluster({ nodes: N });
const BIN = resolve("node_modules/.bin");

/** How each runtime runs a script, as its docs say (Deno needs both permissions). */
const RUNTIMES: Record<string, string[]> = {
  node: [process.execPath],
  bun: [join(BIN, "bun"), "run"],
  deno: [join(BIN, "deno"), "run", "--allow-env", "--allow-net"],
};

const manifest = JSON.parse(readFileSync("package.json", "utf8")) as {
  version: string;
  devDependencies: Record<string, string>;
};
let project = "";

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), "edgelock-runtimes-"));
  const installed = join(project, "node_modules", "edgelock");
  // The library build of tsup.config.ts (ESM and CJS, every entry), types left out: no runtime
  // reads them. Built outside dist/, which other tests rebuild and clean concurrently.
  const [library] = config as Options[];
  await build({
    ...library,
    config: false,
    outDir: join(installed, "dist"),
    dts: false,
    silent: true,
  });
  copyFileSync("package.json", join(installed, "package.json"));
  mkdirSync(join(project, "node_modules", "@upstash"));
  symlinkSync(
    resolve("node_modules/@upstash/redis"),
    join(project, "node_modules", "@upstash", "redis"),
  );
  // Deno resolves bare imports from node_modules when the project has a package.json.
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({
      name: "app",
      private: true,
      type: "module",
      dependencies: {
        edgelock: manifest.version,
        "@upstash/redis": manifest.devDependencies["@upstash/redis"],
      },
    }),
  );
  copyFileSync("test/runtimes/fixtures/cycle.mjs", join(project, "cycle.mjs"));
  copyFileSync("test/runtimes/fixtures/memory.mjs", join(project, "memory.mjs"));
}, 120_000);

afterAll(() => {
  if (project !== "") rmSync(project, { recursive: true, force: true });
});

/** The script's JSON lines, one step at a time; `next()` lets it go on. */
class Script {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #lines: AsyncIterator<string>;
  stderr = "";

  constructor(command: string[], env: Record<string, string>, file = "cycle.mjs") {
    const [bin = "", ...args] = command;
    this.#child = spawn(bin, [...args, file], {
      cwd: project,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? project,
        // No update check, crash report or telemetry: the runtimes stay offline.
        DENO_NO_UPDATE_CHECK: "1",
        DENO_DIR: join(project, ".deno"),
        DO_NOT_TRACK: "1",
        NO_COLOR: "1",
        ...env,
      },
    });
    this.#child.stderr.on("data", (chunk) => {
      this.stderr += String(chunk);
    });
    const lines: Interface = createInterface({ input: this.#child.stdout });
    this.#lines = lines[Symbol.asyncIterator]();
  }

  /** The next step the script printed. */
  async step(): Promise<Record<string, unknown>> {
    const { value, done } = await this.#lines.next();
    if (done === true) throw new Error(`the script ended early; stderr:\n${this.stderr}`);
    return JSON.parse(value) as Record<string, unknown>;
  }

  next(): void {
    this.#child.stdin.write("\n");
  }

  async exit(): Promise<number | null> {
    if (this.#child.exitCode !== null) return this.#child.exitCode;
    const [code] = (await once(this.#child, "exit")) as [number | null];
    return code;
  }
}

/**
 * Every node shows `expected` for `key`. A call resolves once a majority answered; the last
 * node's request may land a moment later on a loaded machine, so wait for it (bounded).
 */
async function onEveryNode(key: string, expected: (string | null)[]): Promise<void> {
  await eventually(async () => {
    const values = await readBack(dev, N, key);
    return values.every((v, i) => v === expected[i]);
  }).catch(() => undefined);
  expect(await readBack(dev, N, key)).toEqual(expected);
}

describe.each(Object.keys(RUNTIMES))("on %s", (runtime) => {
  it("the Quick start with EDGELOCK_NODES as `edgelock dev` prints it; using, acquire, extend, release on every node", async () => {
    const prefix = uniquePrefix(runtime);
    const script = new Script(RUNTIMES[runtime] ?? [], {
      // The first line `edgelock dev` prints, pasted as the README says.
      EDGELOCK_NODES: JSON.stringify({ nodes: dev.cluster.nodes }),
      LOCK_PREFIX: prefix,
    });

    const using = await script.step();
    expect(using).toMatchObject({ step: "using", runtime, key: "invoice:42", aborted: false });
    expect(using.token).toMatch(/^[0-9a-f]{32}$/);
    await onEveryNode(`${prefix}invoice:42`, Array(N).fill(using.token));
    script.next();
    expect(await script.step()).toEqual({ step: "used", value: "charged 42" });
    await onEveryNode(`${prefix}invoice:42`, Array(N).fill(null));
    script.next();

    const acquired = await script.step();
    expect(acquired).toMatchObject({ step: "acquired", key: "cycle" });
    await onEveryNode(`${prefix}cycle`, Array(N).fill(acquired.token));
    const leased = await pttlBack(dev, N, `${prefix}cycle`);
    for (const pttl of leased) expect(pttl).toBeGreaterThan(0);
    for (const pttl of leased) expect(pttl).toBeLessThanOrEqual(5_000);
    script.next();

    expect(await script.step()).toEqual({ step: "extended", later: true });
    // Resolved at a majority; the last node's EXTEND may land a moment later.
    await eventually(async () =>
      (await pttlBack(dev, N, `${prefix}cycle`)).every((p) => p > Math.max(...leased)),
    ).catch(() => undefined);
    const extended = await pttlBack(dev, N, `${prefix}cycle`);
    // Lease 5 s, extended to 60 s: every node's PTTL now exceeds what any node had before.
    for (const pttl of extended) expect(pttl).toBeGreaterThan(Math.max(...leased));
    for (const pttl of extended) expect(pttl).toBeLessThanOrEqual(60_000);
    await onEveryNode(`${prefix}cycle`, Array(N).fill(acquired.token));
    script.next();

    expect(await script.step()).toEqual({ step: "released", status: "released" });
    await onEveryNode(`${prefix}cycle`, Array(N).fill(null));
    expect(await pttlBack(dev, N, `${prefix}cycle`)).toEqual(Array(N).fill(-2));
    script.next();
    expect(await script.exit()).toBe(0);
  }, 60_000);
});

describe.each(Object.keys(RUNTIMES))("edgelock/testing on %s", (runtime) => {
  it("memory nodes: a lock held on all three with the lease as PTTL, expired by the manual clock, taken again", async () => {
    const script = new Script(RUNTIMES[runtime] ?? [], {}, "memory.mjs");
    expect(await script.step()).toEqual({
      runtime,
      held: [true, true, true],
      leased: [5_000, 5_000, 5_000],
      busy: true,
      expired: [-2, -2, -2],
      released: "released",
    });
    expect(await script.exit()).toBe(0);
  }, 60_000);
});

describe("Deno without permissions", () => {
  it("fails naming the permission it needs, as the README warns", async () => {
    const script = new Script([join(BIN, "deno"), "run"], {
      EDGELOCK_NODES: JSON.stringify({ nodes: dev.cluster.nodes }),
    });
    expect(await script.exit()).not.toBe(0);
    expect(script.stderr).toContain("--allow-env");
  }, 60_000);
});
