/**
 * The Lua edgelock ships: each script of `src/scripts/lua.ts` (the commented, readable source of
 * truth) minus its comments and whitespace, written with its SHA-1 to `src/scripts/shipped.ts`,
 * the module the library imports. `npm run build` runs this first; `test/scripts/shipped.test.ts`
 * checks that running it again gives exactly the committed file, and that every shipped script
 * has the same Lua tokens as its source.
 *
 * `tokenize` is a Lua 5.1 lexer (names, numbers, short and long strings, operators; comments and
 * whitespace dropped), so a `--` inside a string stays in the string. `shipLua` joins the tokens
 * with a separator only where two tokens would otherwise read as one (`local x`, `- -`, `1 ..`):
 * a line break where the source broke the line, a space otherwise.
 *
 *   npx tsx scripts/ship-lua.ts           # rewrite src/scripts/shipped.ts
 *   npx tsx scripts/ship-lua.ts --check   # exit 1 when it is out of date
 *
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as sources from "../src/scripts/lua";

/** One Lua token, and whether a line break separated it from the token before it. */
export interface LuaToken {
  readonly text: string;
  readonly newline: boolean;
}

const OPERATORS = ["...", "..", "==", "~=", "<=", ">=", "::"];
const SINGLE = "+-*/%^#<>=(){}[];:,.~";

/** The level of a long bracket opening at `at` (`[[` 0, `[==[` 2), or -1 when none does. */
function longBracket(lua: string, at: number): number {
  if (lua[at] !== "[") return -1;
  let i = at + 1;
  while (lua[i] === "=") i++;
  return lua[i] === "[" ? i - at - 1 : -1;
}

/** The index just past the long bracket of `level` opened at `at`. */
function longEnd(lua: string, at: number, level: number): number {
  const close = `]${"=".repeat(level)}]`;
  const end = lua.indexOf(close, at + level + 2);
  if (end < 0) throw new Error(`unfinished long bracket at ${at}`);
  return end + close.length;
}

/**
 * The tokens of a Lua 5.1 chunk: comments and whitespace dropped, strings kept verbatim (quotes
 * and escapes included).
 *
 * @example
 * tokenize('local s = "a -- b" -- note').map((t) => t.text); // ["local", "s", "=", '"a -- b"']
 */
export function tokenize(lua: string): LuaToken[] {
  const tokens: LuaToken[] = [];
  let i = 0;
  let newline = false;
  const push = (end: number): void => {
    tokens.push({ text: lua.slice(i, end), newline });
    newline = false;
    i = end;
  };
  while (i < lua.length) {
    const c = lua[i] as string;
    if (c === "\n") {
      newline = true;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (lua.startsWith("--", i)) {
      const level = longBracket(lua, i + 2);
      if (level >= 0) {
        i = longEnd(lua, i + 2, level);
      } else {
        const end = lua.indexOf("\n", i);
        i = end < 0 ? lua.length : end;
      }
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (lua[j] !== c) {
        if (j >= lua.length || lua[j] === "\n") throw new Error(`unfinished string at ${i}`);
        j += lua[j] === "\\" ? 2 : 1;
      }
      push(j + 1);
    } else if (longBracket(lua, i) >= 0) {
      push(longEnd(lua, i, longBracket(lua, i)));
    } else if (/[A-Za-z_]/.test(c)) {
      push(i + (/^[A-Za-z0-9_]+/.exec(lua.slice(i)) as RegExpExecArray)[0].length);
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(lua[i + 1] ?? ""))) {
      // As Lua 5.1 reads a number: digits, dots, letters and an exponent's sign.
      push(
        i +
          (
            /^(0[xX][0-9A-Fa-f]+|[0-9.]*([eE][+-]?)?[0-9A-Za-z_]*)/.exec(
              lua.slice(i),
            ) as RegExpExecArray
          )[0].length,
      );
    } else {
      const op = OPERATORS.find((o) => lua.startsWith(o, i));
      if (op !== undefined) push(i + op.length);
      else if (SINGLE.includes(c)) push(i + 1);
      else throw new Error(`unexpected character ${JSON.stringify(c)} at ${i}`);
    }
  }
  return tokens;
}

/** Whether `a` then `b` with nothing between them reads back as those two tokens. */
function joinable(a: string, b: string): boolean {
  try {
    const again = tokenize(a + b);
    return again.length === 2 && again[0]?.text === a && again[1]?.text === b;
  } catch {
    return false;
  }
}

/**
 * The shipped form of a script: its tokens, separated only where they must be.
 *
 * @example
 * shipLua("local x = 1 -- one\nreturn x\n"); // "local x=1\nreturn x"
 */
export function shipLua(lua: string): string {
  let out = "";
  let previous: string | undefined;
  for (const token of tokenize(lua)) {
    if (previous !== undefined && !joinable(previous, token.text)) {
      out += token.newline ? "\n" : " ";
    }
    out += token.text;
    previous = token.text;
  }
  return out;
}

/** Lower-case hex SHA-1 of the UTF-8 text, as Redis names a script. */
export async function sha1(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The commented sources, by export name (`ACQUIRE_LUA`, …), sorted by name (a module namespace
 * lists its exports in that order under ESM, in declaration order under tsx's CommonJS).
 */
export const SOURCES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(sources)
    .filter(([name]) => name.endsWith("_LUA"))
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);

export const SHIPPED_PATH = fileURLToPath(new URL("../src/scripts/shipped.ts", import.meta.url));

/** The text of `src/scripts/shipped.ts` for the current sources. */
export async function renderShipped(): Promise<string> {
  let out = `// Generated by scripts/ship-lua.ts from src/scripts/lua.ts (the commented source): each script
// minus its comments and whitespace, with the SHA-1 of that text. Do not edit; \`npm run build\`
// regenerates it, and test/scripts/shipped.test.ts checks it is current.
`;
  for (const [name, lua] of Object.entries(SOURCES)) {
    const shipped = shipLua(lua);
    const stem = name.slice(0, -"_LUA".length);
    out += `\n/** \`${name}\` of lua.ts, shipped. */\nexport const ${name} = ${JSON.stringify(shipped)};\n`;
    out += `/** SHA-1 of \`${name}\`. */\nexport const ${stem}_SHA1 = "${await sha1(shipped)}";\n`;
  }
  return out;
}

async function main(): Promise<number> {
  const text = await renderShipped();
  if (process.argv.includes("--check")) {
    const current = readFileSync(SHIPPED_PATH, "utf8");
    if (current === text) return 0;
    console.error("src/scripts/shipped.ts is out of date: run npx tsx scripts/ship-lua.ts");
    return 1;
  }
  writeFileSync(SHIPPED_PATH, text);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then((code) => {
    process.exitCode = code;
  });
}
