/**
 * Every reference from the code (src/, test/, functions/) and from ARCHITECTURE.md into a document
 * of the repository names something that exists there, so a reader who follows one lands on the
 * argument it cites. How a reference is written (ARCHITECTURE.md, "The simulation, the parity suite"):
 *
 * - a section of a document: `docs/SAFETY.md §4b` — the number of a heading `## 4b. …`;
 * - a claim: `docs/SAFETY.md E1`, `SAFETY.md §6b I1`, `docs/SAFETY.md Theorem 3` — a label the
 *   document defines (a row `| A1 |` of the assumptions, a paragraph opening `**E1 (…)**` or
 *   `**… (J1).**`, `**Theorem 3`), in the section given, if one is;
 * - a named part of a section: `docs/SAFETY.md §3 "resume"` — text that section contains; several
 *   targets may follow one name (`docs/SAFETY.md §3 "resume", §4 Theorem 3`);
 * - a heading of a document without numbered sections: `ARCHITECTURE.md "Rooms and doors"`.
 *
 * Also checked: a path to a Markdown file (`docs/TESTING.md`) names a file of the repository, a
 * word before `§` (`DESIGN §3`) is a document in docs/, and a comma right after a document's name
 * introduces one of the targets above, never free words (`SAFETY.md, liveness`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SCANNED = ["src", "test", "functions"];
const EXTENSIONS = /\.(ts|mts|cts|mjs|cjs|js)$/;

interface Section {
  readonly id: string;
  /** The section's text, Markdown emphasis and code marks removed, lower case. */
  readonly text: string;
  readonly labels: ReadonlySet<string>;
}

/** The numbered sections of a document (`## 4b. Title`) with the claims each defines. */
function sectionsOf(markdown: string): Section[] {
  return markdown
    .split(/^## /m)
    .slice(1)
    .flatMap((part) => {
      const id = /^(\d+[a-z]?)\. /.exec(part)?.[1];
      if (id === undefined) return [];
      const labels = new Set<string>();
      for (const m of part.matchAll(/^\| ([A-Z]\d+) \|/gm)) labels.add(m[1] as string);
      for (const m of part.matchAll(/\*\*([A-Z]\d+) \(/g)) labels.add(m[1] as string);
      for (const m of part.matchAll(/\*\*[^*\n]*\(([A-Z]\d+)\)\.?\*\*/g))
        labels.add(m[1] as string);
      for (const m of part.matchAll(/\*\*Theorem (\d+)/g)) labels.add(`Theorem ${m[1]}`);
      const text = part.replace(/[*`_]/g, "").replace(/\s+/g, " ").toLowerCase();
      return [{ id, text, labels }];
    });
}

/** A document of the repository by the name a reference gives: a path from the root, or docs/. */
function documentPath(name: string): string | undefined {
  const candidates = name.includes("/") ? [name] : [name, `docs/${name}`];
  return candidates.map((c) => join(ROOT, c)).find((path) => existsSync(path));
}

const documents = new Map<string, Section[]>();
function sections(path: string): Section[] {
  let found = documents.get(path);
  if (found === undefined) {
    found = sectionsOf(readFileSync(path, "utf8"));
    documents.set(path, found);
  }
  return found;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules") return [];
    if (statSync(path).isDirectory()) return files(path);
    return EXTENSIONS.test(name) ? [path] : [];
  });
}

/** A mention of a document: `docs/SAFETY.md`, `SAFETY.md`, or a bare name before `§` (`DESIGN §3`). */
const MENTION = /(?<![\w./-])(?:((?:[\w.-]+\/)*[\w-]+\.md)\b|([A-Z][A-Z-]{2,})(?=\s?§))/g;
/** One target after a document's name: `§4b`, a label (`E1`, `Theorem 3`) or `"a name"`. */
const TARGET = /^(?:\s*,\s*|\s+)(§\s?\d+[a-z]?|Theorem\s+\d+|[A-Z]\d+\b|"[^"\n]+")/i;
const ANOTHER_DOCUMENT = /^\s*,\s*(?:[\w.-]+\/)*[\w-]+\.md\b/;

/** The headings of a document, lower case, without Markdown marks. */
const headingsOf = (markdown: string): string[] =>
  [...markdown.matchAll(/^#+ (.*)$/gm)].map((m) =>
    (m[1] as string).replace(/[*`_]/g, "").toLowerCase(),
  );

/** What is wrong with one target of a reference into `path`, within `section` if one was given. */
function problemOf(path: string, section: Section | undefined, target: string): string | undefined {
  const doc = basename(path);
  if (target.startsWith('"')) {
    const words = target.slice(1, -1).toLowerCase();
    if (section !== undefined) {
      return section.text.includes(words)
        ? undefined
        : `${doc} §${section.id} does not contain ${target}`;
    }
    const headings = headingsOf(readFileSync(path, "utf8"));
    return headings.some((h) => h.includes(words)) ? undefined : `${doc} has no heading ${target}`;
  }
  const label = target.replace(/^theorem\s+/i, "Theorem ");
  const scope = section === undefined ? sections(path) : [section];
  if (scope.some((s) => s.labels.has(label))) return undefined;
  return `${doc}${section === undefined ? "" : ` §${section.id}`} defines no ${label}`;
}

/** What is wrong with each reference in `source` (`where` names the file), or nothing. */
function check(where: string, source: string): string[] {
  // Comment continuations (` * `, `// `) read as one line, newlines kept for line numbers.
  const text = source.replace(/\n[ \t]*(?:\*(?!\/)|\/\/)[ \t]?/g, "\n");
  const problems: string[] = [];
  for (const m of text.matchAll(MENTION)) {
    const at = `${where}:${text.slice(0, m.index).split("\n").length}`;
    let rest = text.slice((m.index as number) + m[0].length);
    const targets: string[] = [];
    for (let t = TARGET.exec(rest); t !== null; t = TARGET.exec(rest)) {
      targets.push(t[1] as string);
      rest = rest.slice(t[0].length);
    }
    // A file name alone ("X.md", "README.md") cites nothing; a path or a target must resolve.
    if (targets.length === 0 && m[1] !== undefined && !m[1].includes("/")) continue;
    const path = documentPath(m[1] ?? `${m[2]}.md`);
    if (path === undefined) {
      problems.push(`${at}: ${m[0]} is no document of this repository`);
      continue;
    }
    if (targets.length === 0 && /^\s*,\s*\S/.test(rest) && !ANOTHER_DOCUMENT.test(rest)) {
      const words = rest.split("\n")[0]?.slice(0, 24);
      problems.push(
        `${at}: "${m[0]}${words}…": after a document, a comma introduces §…, a claim or "a name"`,
      );
    }
    let section: Section | undefined;
    for (const target of targets) {
      if (target.startsWith("§")) {
        const id = target.slice(1).trim();
        section = sections(path).find((s) => s.id === id);
        if (section === undefined) {
          problems.push(`${at}: ${basename(path)} has no section §${id}`);
          break;
        }
        continue;
      }
      const problem = problemOf(path, section, target);
      if (problem !== undefined) problems.push(`${at}: ${problem}`);
    }
  }
  return problems;
}

/** The files checked: this one is left out, its sample cites broken targets on purpose. */
const scanned = (): string[] =>
  [...SCANNED.flatMap((dir) => files(join(ROOT, dir))), join(ROOT, "ARCHITECTURE.md")].filter(
    (path) => path !== import.meta.filename,
  );

describe("references into the repository's documents", () => {
  it("finds the sections and claims of docs/SAFETY.md", () => {
    const safety = sections(join(ROOT, "docs/SAFETY.md"));
    expect(safety.map((s) => s.id)).toEqual(expect.arrayContaining(["1", "2", "4b", "6c", "7"]));
    const labels = new Set(safety.flatMap((s) => [...s.labels]));
    for (const label of ["A1", "A9", "L3", "E1", "F2", "J1", "I1", "S1", "O4", "Theorem 3"]) {
      expect(labels).toContain(label);
    }
  });

  it("tells a broken reference from a sound one", () => {
    const sample = [
      '// docs/SAFETY.md §6b I1, docs/SAFETY.md E2, SAFETY.md §3 "resume", §4 Theorem 3',
      '/* (docs/SAFETY.md §6, "Our releases first") (docs/SAFETY.md L3, theorem 3) */',
      "// docs/SAFETY.md F1; docs/SAFETY.md, lemma E; DESIGN §3; docs/SAFETY.md §9",
      '// docs/SAFETY.md §5 I1; docs/SAFETY.md §6, "honest failures"; reference/x.md §5',
      '// ARCHITECTURE.md "Rooms and doors", docs/SAFETY.md "Why edgelock", docs/SAFETY.md "Rooms"',
    ].join("\n");
    expect(check("sample", sample)).toEqual([
      "sample:3: SAFETY.md defines no F1",
      'sample:3: "docs/SAFETY.md, lemma E; DESIGN §3; do…": after a document, a comma introduces §…, a claim or "a name"',
      "sample:3: DESIGN is no document of this repository",
      "sample:3: SAFETY.md has no section §9",
      "sample:4: SAFETY.md §5 defines no I1",
      'sample:4: SAFETY.md §6 does not contain "honest failures"',
      "sample:4: reference/x.md is no document of this repository",
      'sample:5: SAFETY.md has no heading "Rooms"',
    ]);
  });

  it("resolves every reference in src/, test/, functions/ and ARCHITECTURE.md", () => {
    const problems = scanned().flatMap((path) =>
      check(relative(ROOT, path), readFileSync(path, "utf8")),
    );
    expect(problems).toEqual([]);
  });

  it("finds no project history in the code: the why stays, the issue numbers go to commits", () => {
    const history = scanned().flatMap((path) => {
      const text = readFileSync(path, "utf8").replace(/\n[ \t]*(?:\*(?!\/)|\/\/)[ \t]?/g, "\n");
      return [...text.matchAll(/\bissues?\s+\d+|\boutside\s+review/gi)].map(
        (m) =>
          `${relative(ROOT, path)}:${text.slice(0, m.index).split("\n").length}: ${m[0].replace(/\s+/g, " ")}`,
      );
    });
    expect(history).toEqual([]);
  });
});
