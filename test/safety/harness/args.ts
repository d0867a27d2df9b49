/**
 * Command-line options of `scripts/chaos.ts` (`npm run chaos -- --duration 10m --seed 42 …`).
 *
 * @module
 */

import { randomSeed } from "./random";
import type { RunOptions } from "./run";
import type { Profile } from "./schedule";

const PROFILES: readonly Profile[] = ["keep-data", "delayed-empty", "mixed", "unsafe"];

/** Usage text. */
export const USAGE = `usage: npm run chaos -- [options]
  --duration <n>[ms|s|m|h]  how long clients contend (bare number = seconds)   default 60s
  --seed <n>                seed of the fault schedule and client choices      default random
  --clients <n>             clients per process                                default 8
  --processes <n>           client processes (0 = in this process)             default 2
  --keys <n>                lock keys contended for                            default 3
  --lease <ms>              lease of every lock                                default 1000
  --nodes <n>               lock cluster size                                  default 5
  --request-timeout <ms>    per-node request timeout                           default: the library's
  --profile <p>             keep-data | delayed-empty | mixed | unsafe         default mixed
  --no-fencing              plain locks (no fence tokens, no fenced writes)
  --wake                    pass wake: true (no effect since the wait queue)
  --json                    print the report as JSON as well`;

/**
 * Parse a duration: `90`, `90s`, `1500ms`, `10m`, `1h`.
 *
 * @example parseDuration("10m") // 600000
 */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new Error(`invalid duration "${text}" (expected e.g. 90s, 10m, 1500ms)`);
  const value = Number(match[1]);
  const unit = match[2] ?? "s";
  const factor = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[unit] as number;
  return Math.round(value * factor);
}

function integer(name: string, text: string | undefined, min: number): number {
  const value = Number(text);
  if (text === undefined || !Number.isSafeInteger(value) || value < min) {
    throw new Error(`--${name} expects an integer >= ${min}, got ${text ?? "nothing"}`);
  }
  return value;
}

/** Parsed command line: the run's options plus output flags. */
export interface ChaosArgs {
  readonly run: RunOptions;
  readonly json: boolean;
  readonly help: boolean;
}

/**
 * Parse `argv` (without `node` and the script).
 *
 * @example parseArgs(["--duration", "10m", "--seed", "7"]).run.durationMs // 600000
 */
export function parseArgs(argv: readonly string[]): ChaosArgs {
  let durationMs = 60_000;
  let seed: number | undefined;
  let clients = 8;
  let processes = 2;
  let keys = 3;
  let lease = 1_000;
  let nodes = 5;
  let requestTimeout: number | undefined;
  let profile: Profile = "mixed";
  let fencing = true;
  let wake = false;
  let json = false;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.includes("=") ? arg.split("=", 2) : [arg, undefined];
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case "--duration":
        durationMs = parseDuration(value() ?? "");
        break;
      case "--seed":
        seed = integer("seed", value(), 0);
        break;
      case "--clients":
        clients = integer("clients", value(), 1);
        break;
      case "--processes":
        processes = integer("processes", value(), 0);
        break;
      case "--keys":
        keys = integer("keys", value(), 1);
        break;
      case "--lease":
        lease = integer("lease", value(), 100);
        break;
      case "--nodes":
        nodes = integer("nodes", value(), 3);
        break;
      case "--request-timeout":
        requestTimeout = integer("request-timeout", value(), 1);
        break;
      case "--profile": {
        const p = value() as Profile;
        if (!PROFILES.includes(p))
          throw new Error(`--profile expects one of ${PROFILES.join(", ")}`);
        profile = p;
        break;
      }
      case "--no-fencing":
        fencing = false;
        break;
      case "--wake":
        wake = true;
        break;
      case "--json":
        json = true;
        break;
      case "--help":
      case "-h":
        help = true;
        break;
      default:
        throw new Error(`unknown option ${arg}\n${USAGE}`);
    }
  }
  if (durationMs < 3 * lease) throw new Error("--duration must be at least 3 leases");
  return {
    run: {
      seed: seed ?? randomSeed(),
      durationMs,
      clients,
      processes,
      keys,
      lease,
      nodes,
      profile,
      fencing,
      ...(wake ? { wake } : {}),
      ...(requestTimeout === undefined ? {} : { requestTimeout }),
    },
    json,
    help,
  };
}
