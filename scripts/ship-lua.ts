/**
 * The Lua edgelock ships: each script of `src/scripts/lua.ts` (the commented, readable source of
 * truth) minus its comments and whitespace, its locals renamed short, written with its SHA-1 to
 * `src/scripts/shipped.ts`, the module the library imports (and each of `semaphore-lua.ts`, the
 * semaphore's scripts, to `semaphore-shipped.ts`, renamed by an extension of the lock scripts'
 * renaming, so the lock scripts' texts do not depend on them). `npm run build` runs this first;
 * `test/scripts/shipped.test.ts` checks that running it again gives exactly the committed file,
 * and that every shipped script has the same Lua tokens as its source up to a one-to-one renaming
 * of variables (docs/SAFETY.md §2).
 *
 * `tokenize` is a Lua 5.1 lexer (names, numbers, short and long strings, operators; comments and
 * whitespace dropped), so a `--` inside a string stays in the string. `shipLua` joins the tokens
 * with a separator only where two tokens would otherwise read as one (`local x`, `- -`, `1 ..`):
 * a line break where the source broke the line, a space otherwise; `localNames` picks the short
 * names (`a`, `b`, … the most used local first), the same for every script.
 *
 *   npx tsx scripts/ship-lua.ts           # rewrite src/scripts/shipped.ts, semaphore-shipped.ts
 *   npx tsx scripts/ship-lua.ts --check   # exit 1 when it is out of date
 *
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as sources from "../src/scripts/lua";
import * as semaphoreSources from "../src/scripts/semaphore-lua";

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

/** Lua 5.1's reserved words. */
export const KEYWORDS: ReadonlySet<string> = new Set(
  "and break do else elseif end false for function if in local nil not or repeat return then true until while".split(
    " ",
  ),
);

/**
 * The globals of Redis's Lua environment (and Lua 5.1's): a script can only read these (Redis
 * refuses any other global), so a local is never renamed when it shadows one, and no local is
 * renamed to one.
 */
export const REDIS_GLOBALS: ReadonlySet<string> = new Set([
  ..."redis KEYS ARGV cjson cmsgpack bit struct string table math os coroutine debug".split(" "),
  ..."tonumber tostring type pairs ipairs next select unpack error pcall xpcall assert".split(" "),
  ..."rawget rawset rawequal rawlen setmetatable getmetatable print load loadstring".split(" "),
  ..."dofile loadfile gcinfo module require newproxy setfenv getfenv collectgarbage".split(" "),
  ..."_G _VERSION".split(" "),
]);

const isName = (text: string): boolean =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(text) && !KEYWORDS.has(text);

/**
 * For each token, whether it is a name in variable position: a Lua name that is neither a field
 * (after `.` or `:`) nor a table constructor's key (`{ key = ... }`), i.e. a name Lua resolves to
 * a local or a global. Throws on a function written inside a table constructor, where a statement
 * could start after `{`, `,` or `;` and this scan could not tell a key from an assignment.
 *
 * @example
 * variables(tokenize("local t={ok=x}return t.ok")); // [f, t, f, f, f, f, t, f, f, t, f, f]
 */
export function variables(tokens: readonly LuaToken[]): boolean[] {
  const open: string[] = [];
  return tokens.map(({ text }, i) => {
    const previous = tokens[i - 1]?.text;
    const inTable = open[open.length - 1] === "{";
    if (text === "(" || text === "{" || text === "[") open.push(text);
    else if (text === ")" || text === "}" || text === "]") open.pop();
    if (text === "function" && inTable) throw new Error("a function inside a table constructor");
    if (!isName(text) || previous === "." || previous === ":") return false;
    const key =
      inTable &&
      (previous === "{" || previous === "," || previous === ";") &&
      tokens[i + 1]?.text === "=";
    return !key;
  });
}

/** The names a chunk declares as locals: `local a, b`, `local function f`, parameters, `for` variables. */
function declared(tokens: readonly LuaToken[]): Set<string> {
  const names = new Set<string>();
  const list = (from: number): void => {
    for (let i = from; isName(tokens[i]?.text ?? ""); i += 2) {
      names.add(tokens[i]?.text as string);
      if (tokens[i + 1]?.text !== ",") break;
    }
  };
  tokens.forEach(({ text }, i) => {
    if (text === "local") list(tokens[i + 1]?.text === "function" ? i + 2 : i + 1);
    else if (text === "for") list(i + 1);
    else if (text === "function") {
      let j = i + 1;
      while (tokens[j] !== undefined && tokens[j]?.text !== "(") j++;
      list(j + 1);
    }
  });
  return names;
}

/** Short names in order: `a`…`z`, `A`…`Z`, then two letters. */
function* shortNames(): Generator<string> {
  const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  for (const a of letters) yield a;
  for (const a of letters) for (const b of `${letters}0123456789_`) yield a + b;
}

/**
 * The renaming `shipLua` applies: every local a chunk declares (but none that shadows a Redis
 * global) gets a short name, the most used first, and no short name is a keyword, a Redis global
 * or a name the chunk keeps. A bijection on the chunk's variable names, applied to every variable
 * occurrence, keeps what each occurrence refers to (test/scripts/shipped.test.ts).
 *
 * @example
 * localNames(tokenize("local count=1 return count")); // Map { "count" => "a" }
 *
 * With `base`, the renaming extends it: its names keep their short names, and the chunks' other
 * locals get short names that `base` does not use (the semaphore's scripts extend the lock
 * scripts' renaming, so a helper has one short name everywhere and no lock script changes).
 */
export function localNames(
  chunks: readonly (readonly LuaToken[])[],
  base: ReadonlyMap<string, string> = new Map(),
): Map<string, string> {
  const renamed = new Set<string>();
  for (const tokens of chunks) for (const name of declared(tokens)) renamed.add(name);
  for (const name of REDIS_GLOBALS) renamed.delete(name);
  // A base renaming is kept as it is: only the chunks' other locals get new short names.
  for (const name of base.keys()) renamed.delete(name);
  const taken = new Set(base.values());
  const uses = new Map<string, number>();
  const kept = new Set<string>();
  for (const tokens of chunks) {
    const isVariable = variables(tokens);
    tokens.forEach(({ text }, i) => {
      if (!isVariable[i]) return;
      if (renamed.has(text)) uses.set(text, (uses.get(text) ?? 0) + 1);
      else if (!base.has(text)) kept.add(text);
    });
  }
  // Most used first; ties in order of first use.
  const order = [...uses.keys()].sort((a, b) => (uses.get(b) ?? 0) - (uses.get(a) ?? 0));
  const names = new Map<string, string>(base);
  const short = shortNames();
  for (const name of order) {
    let next = short.next().value as string;
    while (KEYWORDS.has(next) || REDIS_GLOBALS.has(next) || kept.has(next) || taken.has(next)) {
      next = short.next().value as string;
    }
    names.set(name, next);
  }
  return names;
}

/**
 * The shipped form of a script: its tokens, its locals renamed short (`localNames`), separated
 * only where they must be.
 *
 * @example
 * shipLua("local count = 1 -- one\nreturn count\n"); // "local a=1\nreturn a"
 */
export function shipLua(
  lua: string,
  names: ReadonlyMap<string, string> = localNames([tokenize(lua)]),
): string {
  const tokens = tokenize(lua);
  const isVariable = variables(tokens);
  // A renaming made for other chunks must cover this one: every local it declares renamed, and
  // no name it keeps taken by a renamed local.
  const targets = new Set(names.values());
  for (const name of declared(tokens)) {
    if (!REDIS_GLOBALS.has(name) && !names.has(name)) throw new Error(`local ${name} not renamed`);
  }
  tokens.forEach(({ text }, i) => {
    if (isVariable[i] && !names.has(text) && targets.has(text)) {
      throw new Error(`${text} is both kept and a renamed local's new name`);
    }
  });
  let out = "";
  let previous: string | undefined;
  tokens.forEach((token, i) => {
    const text = isVariable[i] ? (names.get(token.text) ?? token.text) : token.text;
    if (previous !== undefined && !joinable(previous, text)) {
      out += token.newline ? "\n" : " ";
    }
    out += text;
    previous = text;
  });
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
export const SOURCES: Readonly<Record<string, string>> = scriptsOf(sources);

/** The semaphore's commented sources (`semaphore-lua.ts`), by export name, sorted by name. */
export const SEMAPHORE_SOURCES: Readonly<Record<string, string>> = scriptsOf(semaphoreSources);

function scriptsOf(module: Readonly<Record<string, unknown>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(module)
      .filter((entry): entry is [string, string] => entry[0].endsWith("_LUA"))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}

/**
 * The one renaming of locals every shipped script uses: the same helper (`lockKey`, …) gets the
 * same short name in every script, so the scripts stay alike and gzip well side by side.
 */
export const SHIPPED_NAMES: ReadonlyMap<string, string> = localNames(
  Object.values(SOURCES).map(tokenize),
);

/**
 * The renaming of the semaphore's scripts: the lock scripts' (`SHIPPED_NAMES`), extended with
 * short names for the locals only they have. Computed apart, so adding or changing a semaphore
 * script never changes a lock script's shipped text or SHA-1 (test/scripts/shipped.test.ts).
 */
export const SEMAPHORE_NAMES: ReadonlyMap<string, string> = localNames(
  Object.values(SEMAPHORE_SOURCES).map(tokenize),
  SHIPPED_NAMES,
);

export const SHIPPED_PATH = fileURLToPath(new URL("../src/scripts/shipped.ts", import.meta.url));
export const SEMAPHORE_SHIPPED_PATH = fileURLToPath(
  new URL("../src/scripts/semaphore-shipped.ts", import.meta.url),
);

/** The text of `src/scripts/shipped.ts` for the current sources. */
export function renderShipped(): Promise<string> {
  return render("src/scripts/lua.ts", SOURCES, SHIPPED_NAMES);
}

/** The text of `src/scripts/semaphore-shipped.ts` for the current semaphore sources. */
export function renderSemaphoreShipped(): Promise<string> {
  return render("src/scripts/semaphore-lua.ts", SEMAPHORE_SOURCES, SEMAPHORE_NAMES);
}

async function render(
  from: string,
  scripts: Readonly<Record<string, string>>,
  names: ReadonlyMap<string, string>,
): Promise<string> {
  let out = `// Generated by scripts/ship-lua.ts from ${from} (the commented source): each script
// minus its comments and whitespace, its locals renamed short, with the SHA-1 of that text. Do not edit; \`npm run build\`
// regenerates it, and test/scripts/shipped.test.ts checks it is current.
`;
  for (const [name, lua] of Object.entries(scripts)) {
    const shipped = shipLua(lua, names);
    const stem = name.slice(0, -"_LUA".length);
    out += `\n/** \`${name}\` of ${from.slice(from.lastIndexOf("/") + 1)}, shipped. */\nexport const ${name} = ${JSON.stringify(shipped)};\n`;
    out += `/** SHA-1 of \`${name}\`. */\nexport const ${stem}_SHA1 = "${await sha1(shipped)}";\n`;
  }
  return out;
}

async function main(): Promise<number> {
  const outputs: [string, string][] = [
    [SHIPPED_PATH, await renderShipped()],
    [SEMAPHORE_SHIPPED_PATH, await renderSemaphoreShipped()],
  ];
  if (process.argv.includes("--check")) {
    const stale = outputs.filter(([path, text]) => readFileSync(path, "utf8") !== text);
    if (stale.length === 0) return 0;
    for (const [path] of stale) {
      console.error(`${path} is out of date: run npx tsx scripts/ship-lua.ts`);
    }
    return 1;
  }
  for (const [path, text] of outputs) writeFileSync(path, text);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then((code) => {
    process.exitCode = code;
  });
}
