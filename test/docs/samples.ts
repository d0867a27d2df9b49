/**
 * The TypeScript samples of the user-facing docs (README.md, docs/*.md), extracted and typechecked
 * against the library's sources as a user's project would compile them (test/quickstart.test.ts
 * runs them from the packed tarball).
 *
 * Convention, in the Markdown: every ```ts block is a sample. An HTML comment right before it
 * (only blank lines between) tells how to check it, invisible on GitHub and npm:
 *
 * - `<!-- sample: <TypeScript> -->`: a prelude put before the sample, declaring the reader's own
 *   business functions the sample calls without defining them (`declare function chargeCard…;`),
 *   never an import or a value of another section: samples are self-contained, and the runs of
 *   test/quickstart.test.ts (see ./run.ts) turn each declaration into a stub.
 * - `<!-- sample workers: <TypeScript> -->` (or `<!-- sample workers -->`): the same, checked with
 *   the Workers globals (`@cloudflare/workers-types`, no DOM, no Node) instead of Node's and the
 *   DOM's.
 * - `<!-- sample skip: <reason> -->`: not checked; the reason is reported by the test.
 *
 * Samples are modules (`moduleDetection: "force"`), checked with the project's own compiler
 * options (tsconfig.json: strict, `noUncheckedIndexedAccess`, `exactOptionalPropertyTypes`), one
 * program per environment for all samples, with `edgelock`, `edgelock/hono`, … mapped to src/.
 * Files are virtual (served by the compiler host, never written), placed under test/docs so that
 * `hono`, `aws-lambda` & co. resolve from the project's node_modules.
 *
 * @module
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { packageEntries } from "../support/entries";

/** The repository root. */
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Package entry points (package.json `exports`) and the sources they are built from (tsup). */
export const ENTRY_SOURCES: Readonly<Record<string, string>> = Object.fromEntries(
  packageEntries().map((entry) => [entry.specifier, entry.source]),
);

export type SampleEnv = "node" | "workers";

/** One fenced ```ts block. */
export interface Sample {
  /** Markdown file, relative to the root. */
  readonly file: string;
  /** 1-based line of the sample's first code line in `file`. */
  readonly line: number;
  readonly code: string;
  readonly prelude: string;
  readonly env: SampleEnv;
  /** Set when the sample is not checked, with why. */
  readonly skip?: string;
}

/** A compiler error in a sample, located in its Markdown file. */
export interface SampleError {
  readonly sample: Sample;
  /** `README.md:42` (or `README.md:41 (prelude)`), then the compiler's message. */
  readonly where: string;
  readonly message: string;
}

const DIRECTIVE = /^<!--\s*sample(?:\s+(workers|skip))?(?::\s*([\s\S]*?))?\s*-->$/;

/** The Markdown files whose samples are checked: README.md and docs/*.md. */
export function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs.sort()];
}

/** Every ```ts block of `markdown`, with the directive of the comment right before it. */
export function extractSamples(file: string, markdown: string): Sample[] {
  const lines = markdown.split("\n");
  const samples: Sample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```(\w*)\s*$/.exec(lines[i] ?? "");
    if (fence === null) continue;
    const end = lines.findIndex((text, j) => j > i && /^\s*```\s*$/.test(text));
    const close = end === -1 ? lines.length : end;
    if (fence[2] === "ts" || fence[2] === "typescript") {
      const directive = directiveBefore(lines, i);
      const base = { file, line: i + 2, code: lines.slice(i + 1, close).join("\n") };
      if (directive?.kind === "skip") {
        samples.push({ ...base, prelude: "", env: "node", skip: directive.text });
      } else {
        const env = directive?.kind === "workers" ? "workers" : "node";
        samples.push({ ...base, prelude: directive?.text ?? "", env });
      }
    }
    i = close;
  }
  return samples;
}

/** The `<!-- sample… -->` comment ending right before line `fence` (blank lines allowed). */
function directiveBefore(
  lines: readonly string[],
  fence: number,
): { kind: "prelude" | "workers" | "skip"; text: string } | undefined {
  let last = fence - 1;
  while (last >= 0 && (lines[last] ?? "").trim() === "") last--;
  if (!(lines[last] ?? "").trimEnd().endsWith("-->")) return undefined;
  let first = last;
  while (first >= 0 && !(lines[first] ?? "").trimStart().startsWith("<!--")) first--;
  if (first < 0) return undefined;
  const match = DIRECTIVE.exec(
    lines
      .slice(first, last + 1)
      .join("\n")
      .trim(),
  );
  if (match === null) return undefined;
  const kind = match[1] === "workers" || match[1] === "skip" ? match[1] : "prelude";
  return { kind, text: match[2] ?? "" };
}

/** The project's compiler options (tsconfig.json), for `env`, with the entry points mapped. */
function optionsFor(env: SampleEnv): ts.CompilerOptions {
  const configPath = join(ROOT, "tsconfig.json");
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  if (config.error !== undefined)
    throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, "\n"));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT, undefined, configPath);
  const paths = Object.fromEntries(
    Object.entries(ENTRY_SOURCES).map(([entry, source]) => [entry, [join(ROOT, source)]]),
  );
  if (env === "node") return { ...parsed.options, types: ["node"], paths, ...sampleOptions };
  const workers = { lib: ["lib.es2023.d.ts"], types: ["@cloudflare/workers-types"] };
  return { ...parsed.options, ...workers, paths, ...sampleOptions };
}

const sampleOptions = { moduleDetection: ts.ModuleDetectionKind.Force, noEmit: true } as const;

/** Virtual path of a sample (under test/docs, so node_modules resolves as for the project). */
function pathOf(sample: Sample, index: number): string {
  const stem = sample.file.replace(/[^A-Za-z0-9]+/g, "-");
  return join(ROOT, "test", "docs", ".samples", `${stem}-${sample.line}-${index}.ts`);
}

function textOf(sample: Sample): string {
  return sample.prelude === "" ? sample.code : `${sample.prelude}\n${sample.code}`;
}

/**
 * Typecheck every sample that is not skipped: one program per environment. Returns the errors in
 * samples (errors in the library's own sources are `tsc --noEmit`'s business).
 */
export function checkSamples(samples: readonly Sample[]): SampleError[] {
  const errors: SampleError[] = [];
  for (const env of ["node", "workers"] as const) {
    const mine = samples.filter((s) => s.skip === undefined && s.env === env);
    if (mine.length === 0) continue;
    const virtual = new Map(mine.map((sample, i) => [pathOf(sample, i), sample]));
    const options = optionsFor(env);
    const host = ts.createCompilerHost(options, true);
    const { fileExists, readFile, getSourceFile } = host;
    host.fileExists = (path) => virtual.has(path) || fileExists.call(host, path);
    host.readFile = (path) => {
      const sample = virtual.get(path);
      return sample === undefined ? readFile.call(host, path) : textOf(sample);
    };
    host.getSourceFile = (path, language, onError, fresh) => {
      const sample = virtual.get(path);
      if (sample === undefined) return getSourceFile.call(host, path, language, onError, fresh);
      return ts.createSourceFile(path, textOf(sample), language, true, ts.ScriptKind.TS);
    };
    const program = ts.createProgram({ rootNames: [...virtual.keys()], options, host });
    for (const [path, sample] of virtual) {
      const source = program.getSourceFile(path);
      const diagnostics = [
        ...program.getSyntacticDiagnostics(source),
        ...program.getSemanticDiagnostics(source),
      ];
      for (const diagnostic of diagnostics) {
        errors.push(locate(sample, diagnostic));
      }
    }
  }
  return errors;
}

function locate(sample: Sample, diagnostic: ts.Diagnostic): SampleError {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
  const preludeLines = sample.prelude === "" ? 0 : sample.prelude.split("\n").length;
  let where = `${sample.file}:${sample.line}`;
  if (diagnostic.file !== undefined && diagnostic.start !== undefined) {
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    where =
      line < preludeLines
        ? `${sample.file}:${sample.line - 1} (prelude)`
        : `${sample.file}:${sample.line + line - preludeLines}`;
  }
  return { sample, where, message };
}

/** Every sample of every doc file. */
export function allSamples(): Sample[] {
  return docFiles().flatMap((file) => extractSamples(file, readFileSync(join(ROOT, file), "utf8")));
}
