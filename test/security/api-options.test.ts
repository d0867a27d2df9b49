/**
 * One option check for the whole public API. The functions are found, not listed: every export of
 * every entry point of package.json `exports` (imported from the source tsup builds it from),
 * every function of an exported object, every method of an exported class and of the objects the
 * API hands out. Each needs a row in `support/api-surface.ts`: how to call it with options, or why
 * it takes none. Each row that takes options is fed an unknown option, a symbol key, an object
 * without a prototype (with an unknown option), a number, a string, an array, a Map and `null`
 * (unless the row says why it accepts one); each must be refused with the
 * error naming the option, with no request sent to the real nodes, the protected work never run,
 * and the key free (or, for a call on a held lock or a ticket, still held, then released).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevCluster, DevClusterError, startDevCluster } from "../../src/dev/index";
import {
  type ConfigurationError,
  createLocks,
  isConfigurationError,
  semaphore,
} from "../../src/index";
import { quietThenReset, requests } from "../lock/helpers";
import { useDevCluster } from "../support/dev-cluster";
import { packageEntries } from "../support/entries";
import {
  type Feed,
  INSTANCES,
  type InstanceKind,
  KEY,
  type OptionsRow,
  PERMITS,
  ROWS,
  type World,
} from "./support/api-surface";
import { settle } from "./support/inspect";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dev = useDevCluster({ nodes: 3 });
let devCluster: DevCluster;
beforeAll(async () => {
  devCluster = await startDevCluster({ nodes: 1, backend: "memory" });
});
afterAll(() => devCluster?.stop());

const isClass = (value: unknown): boolean =>
  typeof value === "function" && /^class[\s{]/.test(Function.prototype.toString.call(value));

/** `Symbol.asyncDispose` → "Symbol.asyncDispose" (its description differs between runtimes). */
const WELL_KNOWN = new Map(
  Object.getOwnPropertyNames(Symbol)
    .map((name) => [(Symbol as unknown as Record<string, unknown>)[name], `Symbol.${name}`])
    .filter((entry): entry is [symbol, string] => typeof entry[0] === "symbol"),
);

/** A symbol's name if code outside its module can reach it (well-known or registered). */
function reachable(symbol: symbol): string | undefined {
  const key = Symbol.keyFor(symbol);
  return WELL_KNOWN.get(symbol) ?? (key === undefined ? undefined : `Symbol.for(${key})`);
}

/** The methods (not getters) an object has: its own functions and its prototypes'. */
function methodsOf(value: object): string[] {
  const names = new Set<string>();
  for (const [name, member] of Object.entries(value)) {
    if (typeof member === "function") names.add(name);
  }
  for (
    let proto = Object.getPrototypeOf(value) as object | null;
    proto !== null && proto !== Object.prototype && proto !== Function.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (name !== "constructor" && typeof descriptor?.value === "function") names.add(name);
    }
    // `[Symbol.asyncDispose]` and the like: called by the language, listed all the same. A
    // symbol private to a module (the handle's doors for the wrappers) is no public method.
    for (const symbol of Object.getOwnPropertySymbols(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, symbol);
      const name = reachable(symbol);
      if (name !== undefined && typeof descriptor?.value === "function") names.add(`[${name}]`);
    }
  }
  return [...names].sort();
}

/** Every function of the public API by `specifier#name`, and each class's methods. */
async function publicFunctions(): Promise<string[]> {
  const found: string[] = [];
  for (const entry of packageEntries()) {
    const module = (await import(join(ROOT, entry.source))) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      if (typeof value === "function") {
        found.push(`${entry.specifier}#${name}`);
        if (isClass(value)) {
          const proto = (value as { prototype: object }).prototype;
          // Error classes add no methods of their own.
          for (const method of methodsOf(Object.create(proto) as object)) {
            if (!(method in Error.prototype)) found.push(`${name}.${method}`);
          }
        }
      } else if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        for (const method of methodsOf(value)) found.push(`${entry.specifier}#${name}.${method}`);
      }
    }
  }
  return [...new Set(found)].sort();
}

/** Releases and stops whatever an accepted call handed out. */
async function dispose(value: unknown): Promise<void> {
  const v = value as { release?: () => Promise<unknown>; stop?: () => Promise<unknown> } | null;
  if (typeof v?.release === "function") await v.release().catch(() => undefined);
  if (typeof v?.stop === "function" && v !== devCluster) await v.stop().catch(() => undefined);
}

async function world(row: OptionsRow | undefined): Promise<World & { runs: () => number }> {
  const prefix = `api:${crypto.randomUUID()}:`;
  const locks = createLocks({ nodes: dev.cluster.nodes, prefix, requestTimeout: 1_000 });
  let runs = 0;
  const job = async () => {
    runs += 1;
    return "ran";
  };
  const setup = row?.setup;
  const lock =
    setup === "lock" || setup === "ticket"
      ? await locks.acquire(KEY, { lease: 20_000 })
      : undefined;
  const ticket = setup === "ticket" ? await lock?.ticket({ lease: 20_000 }) : undefined;
  const permit =
    setup === "permit"
      ? await semaphore(locks, KEY, { permits: PERMITS }).acquire({ lease: 20_000 })
      : undefined;
  return {
    nodes: dev.cluster.nodes,
    prefix,
    locks,
    lock: lock as World["lock"],
    ticket: ticket as World["ticket"],
    permit: permit as World["permit"],
    job,
    devCluster,
    runs: () => runs,
  };
}

const UNKNOWN = "zzUnknownOption";
const SYMBOL = Symbol("zzSymbolOption");
/** The name a refusal gives a symbol key: its description, as `String(symbol)` shows it. */
const SYMBOL_NAME = "Symbol(zzSymbolOption)";
const FEEDS: Record<Feed, (base: object) => unknown> = {
  unknown: (base) => ({ ...base, [UNKNOWN]: 1 }),
  symbol: (base) => ({ ...base, [SYMBOL]: 1 }),
  // No prototype, so no toString: a refusal that prints the value must not itself throw.
  nullPrototype: (base) => Object.assign(Object.create(null) as object, base, { [UNKNOWN]: 1 }),
  number: () => 5,
  string: () => "options",
  array: (base) => [base],
  map: (base) => new Map(Object.entries(base)),
  null: () => null,
};

/** Why `error` is not the refusal `row` promises naming `name`, or undefined when it is. */
function wrongRefusal(row: OptionsRow, error: unknown, name: string): string | undefined {
  if (row.refusal === "dev") {
    if (!(error instanceof DevClusterError))
      return `expected a DevClusterError, got ${String(error)}`;
    return error.message.includes(name)
      ? undefined
      : `message does not name ${name}: ${error.message}`;
  }
  if (!isConfigurationError(error)) return `expected a ConfigurationError, got ${String(error)}`;
  const { option, message } = error as ConfigurationError;
  if (option !== name) return `names \`${option}\`, not \`${name}\`: ${message}`;
  return message.includes(`\`${name}\``) ? undefined : `message does not name \`${name}\``;
}

/**
 * Lock keys under `prefix` on the real nodes (not fence counters, not failed rounds' tombstones,
 * not the keys' queues: a hash naming the last holder placed, which lives the lease).
 */
async function lockKeys(prefix: string): Promise<string[]> {
  const found: string[] = [];
  for (let i = 0; i < 3; i++) {
    const keys = await dev.direct(i).keys(`${prefix}*`);
    const lock = (k: string) =>
      !k.endsWith(":fence") && !k.endsWith(":wait") && !k.includes(":void:");
    found.push(...keys.filter(lock));
  }
  return found;
}

describe("every public function and method has a row", () => {
  it("every export of every entry point, and every method of what they hand out", async () => {
    const w = await world(undefined);
    const found = await publicFunctions();
    const kinds = Object.keys(INSTANCES) as InstanceKind[];
    for (const kind of kinds) {
      const instance = await INSTANCES[kind](w);
      for (const method of methodsOf(instance)) found.push(`${kind}.${method}`);
      await dispose(
        kind === "Locks" || kind === "DevCluster" || kind === "DevNode" ? null : instance,
      );
    }
    const names = [...new Set(found)].sort();
    const missing = names.filter((name) => !(name in ROWS));
    expect(missing, "functions with no row in support/api-surface.ts").toEqual([]);
    const stale = Object.keys(ROWS).filter((name) => !names.includes(name));
    expect(stale, "rows for functions the API no longer has").toEqual([]);
    // Each kind of object handed out is some row's `returns`: its methods are reached from there.
    const returned = new Set(Object.values(ROWS).flatMap((row) => row.returns ?? []));
    expect(kinds.filter((kind) => !returned.has(kind))).toEqual([]);
    for (const [name, row] of Object.entries(ROWS)) {
      if ("none" in row)
        expect(row.none.length, `${name}: say why it takes no options`).toBeGreaterThan(10);
    }
  });
});

const OPTION_ROWS = Object.entries(ROWS)
  .filter((entry): entry is [string, OptionsRow] => "call" in entry[1])
  .map(([name, row]) => ({ name, row }));

describe("options: an unknown name, a symbol key, a prototype-less object, a non-object, an array, a Map and null are refused", () => {
  it.each(OPTION_ROWS)("$name", async ({ row }) => {
    const w = await world(row);
    await quietThenReset(dev.cluster);
    const problems: string[] = [];
    const base = row.base?.(w) ?? {};
    for (const feed of Object.keys(FEEDS) as Feed[]) {
      const why = row.accepts?.[feed];
      if (why !== undefined) {
        expect(why.length, `${feed}: say why it is accepted`).toBeGreaterThan(10);
        continue;
      }
      const name =
        row.positional ??
        (feed === "unknown" || feed === "nullPrototype"
          ? UNKNOWN
          : feed === "symbol"
            ? SYMBOL_NAME
            : (row.argument ?? "options"));
      const outcome = await Promise.resolve()
        .then(() => row.call(w, FEEDS[feed](base)))
        .then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
      if ("value" in outcome) {
        problems.push(`${feed}: accepted`);
        await dispose(outcome.value);
        continue;
      }
      const wrong = wrongRefusal(row, outcome.error, name);
      if (wrong !== undefined) problems.push(`${feed}: ${wrong}`);
    }
    expect(problems).toEqual([]);
    await settle(50);
    expect(requests(dev.cluster), "requests sent to the nodes by refused calls").toBe(0);
    expect(w.runs(), "the protected work ran").toBe(0);
    if (row.setup === undefined) {
      expect(await lockKeys(w.prefix)).toEqual([]);
      // The row's call itself is sound: with valid options it is accepted (so the refusals
      // above came from the options, not from another argument).
      if (row.positional === undefined) {
        const valid = await Promise.resolve()
          .then(() => row.call(w, base))
          .catch((e: unknown) => e);
        await dispose(valid);
        expect(isConfigurationError(valid) || valid instanceof DevClusterError, String(valid)).toBe(
          false,
        );
      }
      return;
    }
    // Still held on every node, as granted: a refused call changed nothing.
    const held = row.setup === "permit" ? `${KEY}:permit:${w.permit.slot}` : KEY;
    for (let i = 0; i < 3; i++) {
      expect(await dev.direct(i).pttl(`${w.prefix}${held}`)).toBeGreaterThan(10_000);
    }
    if (row.setup === "permit") {
      expect(w.permit.signal.aborted).toBe(false);
      expect((await w.permit.release()).status).toBe("released");
    } else if (row.setup === "lock") {
      expect(w.lock.signal.aborted).toBe(false);
      expect((await w.lock.release()).status).toBe("released");
    } else {
      expect((await (await w.locks.resume(w.ticket)).release()).status).toBe("released");
    }
    for (let i = 0; i < 3; i++) expect(await dev.direct(i).pttl(`${w.prefix}${held}`)).toBe(-2);
  });
});
