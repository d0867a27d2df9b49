/**
 * An offline npm registry for tests that install the packed tarball as a user would: `npm pack` of
 * folders, the installed closure of packages as the project's node_modules has them, a read-only
 * registry of those tarballs on 127.0.0.1, and the live descendants of a process (to prove a CLI
 * left nothing behind).
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve } from "node:path";

const ROOT = resolve(".");
const MODULES = join(ROOT, "node_modules");

export interface Packed {
  readonly name: string;
  readonly version: string;
  readonly filename: string;
  readonly integrity: string;
  readonly shasum: string;
}

/** `npm pack` of folders into `into`; what npm reports for each. */
export function pack(folders: string[], into: string, cwd = ROOT): Packed[] {
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
export function closure(names: string[]): string[] {
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
export async function serveRegistry(dir: string, packed: Packed[], manifests: Map<string, object>) {
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
export function descendants(pid: number): { pid: number; comm: string }[] {
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
