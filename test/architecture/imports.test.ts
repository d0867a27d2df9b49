/**
 * The shape of src/ as ARCHITECTURE.md draws it, checked on every run: no import cycle (type-only
 * imports included), each room imports only the rooms the table below allows, and only through
 * their door (`index.ts`). The table is the one in ARCHITECTURE.md ("Rooms and doors"); a test
 * keeps the two equal, so a new room or a new dependency is a change to both, reviewed as such.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");

/**
 * What each room (a top-level folder of src/) may import. Lower rooms first; a room never
 * imports a room below it in this list that lists it in turn (the table has no cycle).
 */
const ROOMS: Readonly<Record<string, readonly string[]>> = {
  errors: [],
  budget: ["errors"],
  node: ["errors"],
  quorum: ["errors"],
  scripts: ["budget", "errors", "node"],
  memory: ["errors", "node", "scripts"],
  lock: ["budget", "errors", "node", "quorum", "scripts"],
  semaphore: ["budget", "errors", "lock", "quorum", "scripts"],
  dedupe: ["budget", "errors", "lock"],
  idempotency: ["budget", "errors", "lock", "quorum"],
  adapters: ["budget", "dedupe", "errors", "idempotency", "lock", "node", "semaphore"],
  testing: ["errors", "memory"],
  dev: ["errors", "lock", "memory", "node"],
};

/** The package's main entry: it re-exports rooms' doors by name, and nothing in src/ imports it. */
const ENTRY = "index.ts";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** A relative specifier as the bundler resolves it: `x.ts`, or the folder's `x/index.ts`. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not this form
    }
  }
  throw new Error(`${relative(ROOT, from)}: cannot resolve "${specifier}"`);
}

/** Every module a file imports or re-exports, `import type` and `import("…")` types included. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return info.importedFiles
    .map((ref) => resolveImport(file, ref.fileName))
    .filter((target): target is string => target !== undefined);
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file)]));
const name = (file: string): string => relative(SRC, file);
/** The room of a file (its top-level folder of src/), or the file's name at the top of src/. */
const roomOf = (file: string): string => name(file).split("/")[0] as string;

/** The strongly connected components of more than one module, or a module importing itself. */
function cycles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(name(w));
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return found;
}

/** Rows of the table under "## Rooms and doors" in ARCHITECTURE.md: room → rooms it may import. */
function documentedRooms(): Record<string, string[]> {
  const text = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");
  const section = text.split(/^## /m).find((part) => part.startsWith("Rooms and doors"));
  if (section === undefined) throw new Error('ARCHITECTURE.md has no "## Rooms and doors"');
  const rows: Record<string, string[]> = {};
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    const room = /^`src\/([a-z-]+)\/`$/.exec(cells[1] ?? "")?.[1];
    if (room === undefined) continue;
    rows[room] = [...(cells[2] ?? "").matchAll(/`([a-z-]+)`/g)].map((m) => m[1] as string);
  }
  return rows;
}

describe("the shape of src/", () => {
  it("has no import cycle, counting type-only imports", () => {
    expect(cycles()).toEqual([]);
  });

  it("keeps every file in a room: only the package entry sits at the top of src/", () => {
    const loose = files.map(name).filter((file) => !file.includes("/") && file !== ENTRY);
    expect(loose).toEqual([]);
    const unknown = [...new Set(files.map(roomOf))].filter((r) => r !== ENTRY && !(r in ROOMS));
    // A new room: add it to ROOMS here and to the table in ARCHITECTURE.md.
    expect(unknown).toEqual([]);
  });

  it("lets each room import only the rooms the table allows", () => {
    const outside: string[] = [];
    for (const [file, targets] of graph) {
      const room = roomOf(file);
      if (room === ENTRY) continue;
      for (const target of targets) {
        const to = roomOf(target);
        if (to !== room && !(ROOMS[room] ?? []).includes(to)) {
          outside.push(`${name(file)} → ${name(target)} (${room} may not import ${to})`);
        }
      }
    }
    expect(outside).toEqual([]);
  });

  it("enters another room only through its door, the room's index.ts", () => {
    const past = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => roomOf(target) !== roomOf(file) && roomOf(target) !== ENTRY)
        .filter((target) => name(target) !== `${roomOf(target)}/index.ts`)
        .map((target) => `${name(file)} → ${name(target)}`),
    );
    expect(past).toEqual([]);
  });

  it("re-exports from the package entry by name only, so no friend of a door becomes public", () => {
    const entry = readFileSync(join(SRC, ENTRY), "utf8");
    expect(entry).not.toMatch(/export \*/);
  });

  it("draws the same room table as ARCHITECTURE.md", () => {
    expect(documentedRooms()).toEqual(
      Object.fromEntries(Object.entries(ROOMS).map(([room, allowed]) => [room, [...allowed]])),
    );
  });
});
