/**
 * The documentation samples as a reader saves and runs them: every ```ts block of README.md and
 * docs/*.md that names its file on its first line (`// quickstart.mts — run: npx tsx quickstart.mts`)
 * is written to that file in a project that installed the packed tarball, and run there by
 * test/quickstart.test.ts (Node samples under tsx, Bun and Deno servers, Workers under
 * `wrangler dev`). A hidden `<!-- sample: -->` prelude may only declare the reader's own business
 * functions (`declare function chargeCard(…): …;`): for a run each becomes a stub that logs its
 * first argument and resolves to `{}`.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { allSamples, type Sample } from "./samples";

/** A sample that names its file, with the command its first lines give (if any). */
export interface RunnableSample {
  readonly sample: Sample;
  /** The file name the sample gives: `quickstart.mts`, `src/index.ts`, `server.ts`. */
  readonly file: string;
  /** The command after `run:` on its first line, when it gives one. */
  readonly command?: string;
  /** The text to save: the stubs of its prelude, then the sample as printed. */
  readonly source: string;
}

const HEADER = /^\/\/ (\S+\.(?:mts|ts|mjs|js))\b(.*)$/;
/** A command on the second line, after a first line ending in `:` (`//   npx tsx -e '…'`). */
const SECOND = /^\/\/\s{3}(\S.*)$/;

/** The command of a header's rest: after `run: `, up to `   or: …` or a ` (remark)`. */
function commandOf(rest: string, second: string): string | undefined {
  const run = /\brun: (.+)$/.exec(rest);
  if (run?.[1] !== undefined)
    return run[1]
      .replace(/\s{2,}or: .*$/, "")
      .replace(/\s+\(.*\)$/, "")
      .trim();
  if (rest.trimEnd().endsWith(":")) return SECOND.exec(second)?.[1]?.trim();
  return undefined;
}

/** `declare function name(…): …;` of a prelude, as a stub that logs and resolves to `{}`. */
export function stubsOf(prelude: string): string {
  const declarations = prelude
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part !== "");
  return declarations
    .map((part) => {
      const match = /^declare function (\w+)\(/.exec(part);
      if (match === null) {
        throw new Error(`a sample prelude declares more than a business function: ${part}`);
      }
      const name = match[1];
      return `async function ${name}(...args: unknown[]): Promise<any> { console.log(${JSON.stringify(`${name}:`)}, JSON.stringify(args[0])); return {}; }`;
    })
    .join("\n");
}

/** Every sample of the docs that names its file; the others are reported by the test. */
export function runnableSamples(samples: readonly Sample[] = allSamples()): RunnableSample[] {
  const found: RunnableSample[] = [];
  for (const sample of samples) {
    const first = sample.code.split("\n")[0] ?? "";
    const match = HEADER.exec(first);
    if (match === null || sample.skip !== undefined) continue;
    const stubs = stubsOf(sample.prelude);
    const source = stubs === "" ? sample.code : `${stubs}\n${sample.code}`;
    const command = commandOf(match[2] ?? "", sample.code.split("\n")[1] ?? "");
    found.push({ sample, file: match[1] ?? "", source, ...(command ? { command } : {}) });
  }
  return found;
}

/** A free loopback port (bound, then released), for servers that take a port number. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

/** A started process (its own process group) and everything it printed so far. */
export interface Started {
  readonly child: ChildProcess;
  output(): string;
  /** SIGTERM to its process group, SIGKILL after 5 s; resolves once it exited. */
  stop(): Promise<void>;
}

/** `sh -c line` in `cwd`, detached into its own process group so that `stop` ends all of it. */
export function start(line: string, cwd: string, env: NodeJS.ProcessEnv): Started {
  const child = spawn("sh", ["-c", line], { cwd, env, detached: true });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on("data", (chunk) => {
    output += String(chunk);
  });
  const exited = once(child, "exit");
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const group = -(child.pid ?? 0);
      try {
        process.kill(group, "SIGTERM");
      } catch {
        return;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(group, "SIGKILL");
        } catch {}
      }, 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resolves once `started` printed something matching `pattern`; rejects with its output. */
export async function waitFor(started: Started, pattern: RegExp, timeoutMs = 30_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(started.output());
    if (match !== null) return match;
    if (started.child.exitCode !== null || performance.now() > deadline) {
      throw new Error(`never printed ${pattern}:\n${started.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The ```toml block of the README section holding `sample` (its wrangler.toml). */
export function tomlOf(sample: Sample, markdown: string): string {
  const lines = markdown.split("\n");
  let start = sample.line - 1;
  while (start > 0 && !(lines[start] ?? "").startsWith("## ")) start--;
  let end = sample.line;
  while (end < lines.length && !(lines[end] ?? "").startsWith("## ")) end++;
  const section = lines.slice(start, end).join("\n");
  const toml = /```toml\n([\s\S]*?)```/.exec(section);
  if (toml === null)
    throw new Error(`${sample.file}:${sample.line}: no wrangler.toml in its section`);
  return toml[1] ?? "";
}

/** The `curl "…"` lines of the ```sh blocks after `sample` in its section. */
export function curlsAfter(sample: Sample, markdown: string): string[] {
  const lines = markdown.split("\n");
  const urls: string[] = [];
  for (let i = sample.line; i < lines.length && !(lines[i] ?? "").startsWith("## "); i++) {
    const curl = /^curl "([^"]+)"/.exec(lines[i] ?? "");
    if (curl?.[1] !== undefined) urls.push(curl[1]);
  }
  return urls;
}

/**
 * The complete vitest files a doc shows: `[path, block]` for every ```ts block after
 * `<!-- example: <path> -->` (the path of the same file in edgelock's own suite).
 */
export function vitestExamples(markdown: string): [string, string][] {
  const found: [string, string][] = [];
  for (const match of markdown.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)\n```/g)) {
    found.push([match[1] as string, match[2] as string]);
  }
  return found;
}
