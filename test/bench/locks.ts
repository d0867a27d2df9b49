// Lock bench: edgelock against @upstash/lock, node-redlock and the raw floor (the same script
// calls with no library), on one 5-node dev cluster in one run. Prints markdown tables and MET /
// NOT MET per target, and writes every number to bench-results/locks.json.
//
//   npx tsx test/bench/locks.ts                 # full run, about 2.5 minutes
//   npx tsx test/bench/locks.ts --quick         # smoke run, about 30 s
//   npx tsx test/bench/locks.ts --scale 2       # every iteration count and duration × 2
//   npx tsx test/bench/locks.ts --sections uncontended,cost --iterations 3000
//
//   npx tsx test/bench/locks.ts --sections wan --latency 8-12 [--far 40-60]
//
// Flags: --iterations (uncontended rounds), --warmup, --fault-iterations (per condition),
// --duration (contention window, ms), --workers, --hold (ms), --sections
// (uncontended,slow-minority,contention,cost,idempotency,wan,bundle), --latency <min-max> (the
// WAN section's per node request latency, default 8-12), --far <min-max> (the last node's),
// --wan-workers (16), --wan-hold (ms, 20), --wan-rounds (rounds over the WAN contenders, each
// contender's window per round --duration; 2, quick 1), --head-times (repetitions of each
// absent-head measurement; 2, quick 1; 0 skips it), --out (JSON path), --cluster
// per-node|child|in-process (where the dev cluster's REST endpoints run; default per-node: one
// forked process per node, so their work neither runs on the bench's event loop nor queues behind
// the other nodes' on one event loop, as with separate remote servers; child: one forked process
// for all nodes).
//
// Timing claims are ratios of contenders measured in the same run (interleaved rounds), never
// absolute times: the machine is shared, so absolute numbers move from run to run.
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runBundle } from "./bundle";
import { type BenchCluster, startBenchCluster } from "./cluster";
import { runContention } from "./contention";
import { runCost } from "./cost";
import { runIdempotency } from "./idempotency";
import { renderMarkdown } from "./report";
import { runSlowMinority } from "./slow-minority";
import { round3 } from "./stats";
import { type BenchResults, evaluateTargets } from "./targets";
import { runUncontended } from "./uncontended";
import { parseRange, runWan } from "./wan";

const SECTIONS = [
  "uncontended",
  "slow-minority",
  "contention",
  "cost",
  "idempotency",
  "wan",
  "bundle",
] as const;
type Section = (typeof SECTIONS)[number];
const NODES = 5;

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    scale: { type: "string", default: "1" },
    iterations: { type: "string" },
    warmup: { type: "string" },
    "fault-iterations": { type: "string" },
    duration: { type: "string" },
    workers: { type: "string", default: "32" },
    hold: { type: "string", default: "2" },
    sections: { type: "string", default: SECTIONS.join(",") },
    out: { type: "string", default: "bench-results/locks.json" },
    cluster: { type: "string", default: "per-node" },
    latency: { type: "string", default: "8-12" },
    far: { type: "string" },
    "wan-workers": { type: "string", default: "16" },
    "wan-hold": { type: "string", default: "20" },
    "wan-rounds": { type: "string" },
    "head-times": { type: "string" },
  },
});

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!(Number.isFinite(value) && value > 0))
    throw new Error(`--${name}: expected > 0, got ${raw}`);
  return value;
}

const quick = values.quick === true;
const scale = positive("scale", values.scale, 1);
const scaled = (full: number, smoke: number) =>
  Math.max(1, Math.round((quick ? smoke : full) * scale));
const config = {
  quick,
  scale,
  iterations: positive("iterations", values.iterations, scaled(1200, 200)),
  warmup: positive("warmup", values.warmup, scaled(120, 30)),
  faultIterations: positive("fault-iterations", values["fault-iterations"], scaled(600, 100)),
  faultBlock: 50,
  durationMs: positive("duration", values.duration, scaled(5_000, 1_500)),
  workers: positive("workers", values.workers, 32),
  holdMs: positive("hold", values.hold, 2),
  costTimes: quick ? 5 : 20,
  latency: parseRange("latency", values.latency ?? "8-12"),
  far: values.far === undefined ? undefined : parseRange("far", values.far),
  wanWorkers: positive("wan-workers", values["wan-workers"], 16),
  wanHoldMs: positive("wan-hold", values["wan-hold"], 20),
  wanDurationMs: positive("duration", values.duration, scaled(4_000, 1_500)),
  wanRounds: positive("wan-rounds", values["wan-rounds"], quick ? 1 : 2),
  headTimes:
    values["head-times"] === "0" ? 0 : positive("head-times", values["head-times"], quick ? 1 : 2),
  sections: (values.sections ?? "").split(",").filter((s): s is Section => {
    if (!(SECTIONS as readonly string[]).includes(s)) throw new Error(`--sections: unknown ${s}`);
    return true;
  }),
};
const wants = (section: Section) => config.sections.includes(section);
const WHERE: Record<string, BenchCluster["where"]> = {
  "per-node": "child process per node",
  child: "child process",
  "in-process": "in process",
};
const where = WHERE[values.cluster ?? ""];
if (where === undefined) {
  throw new Error(`--cluster: expected per-node, child or in-process, got ${values.cluster}`);
}

const root = fileURLToPath(new URL("../../", import.meta.url));
const outPath = (values.out ?? "").startsWith("/")
  ? (values.out as string)
  : `${root}${values.out}`;
const began = performance.now();
const log = (message: string) =>
  console.error(`[${((performance.now() - began) / 1000).toFixed(1)} s] ${message}`);

const results: BenchResults = {};
const cluster = await startBenchCluster(NODES, where);
try {
  if (wants("uncontended")) {
    log(`uncontended: ${config.iterations} rounds after ${config.warmup} warm-up rounds`);
    results.uncontended = await runUncontended(cluster, {
      rounds: config.iterations,
      warmup: config.warmup,
      timeLimitMs: (quick ? 20_000 : 100_000) * scale,
      nodeCounts: [1, 3, NODES],
    });
  }
  if (wants("slow-minority")) {
    log(`slow minority: ${config.faultIterations} iterations per condition`);
    results.slowMinority = await runSlowMinority(cluster, {
      iterations: config.faultIterations,
      warmup: Math.min(config.warmup, 50),
      blockSize: config.faultBlock,
      latencyMs: 200,
    });
  }
  if (wants("contention")) {
    const options = {
      workers: config.workers,
      holdMs: config.holdMs,
      durationMs: config.durationMs,
    };
    log(`contention: ${options.workers} workers, ${options.durationMs} ms per contender`);
    results.contention = { options, rows: await runContention(cluster, options) };
  }
  if (wants("cost")) {
    log("cost per locked request");
    results.cost = await runCost(cluster, { nodeCounts: [1, 3, NODES], times: config.costTimes });
  }
  if (wants("idempotency")) {
    log("idempotency: node requests per first request and per replay, and their latency");
    results.idempotency = await runIdempotency(cluster, {
      nodeCounts: [1, 3, NODES],
      times: config.costTimes,
      rounds: quick ? 50 : 200,
    });
  }
  if (wants("wan")) {
    const options = {
      workers: config.wanWorkers,
      holdMs: config.wanHoldMs,
      durationMs: config.wanDurationMs,
      rounds: config.wanRounds,
      latency: config.latency,
      far: config.far,
      headTimes: config.headTimes,
    };
    log(
      `WAN: latency ${options.latency.join("-")} ms, ${options.workers} workers, ${options.durationMs} ms each, ${options.rounds} round(s); absent head ×${options.headTimes}`,
    );
    results.wan = await runWan(cluster, options);
  }
  if (wants("bundle")) {
    log("bundle sizes");
    results.bundle = await runBundle();
  }
} finally {
  await cluster.stop();
}

const targets = evaluateTargets(results);
const meta = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: availableParallelism(),
  loadavg: loadavg().map(round3),
  durationS: round3((performance.now() - began) / 1000),
  config,
  cluster: `${NODES} nodes, endpoints ${where}`,
};
const header =
  `## edgelock lock bench — Node ${meta.node}, ${meta.cpus} CPUs, load ${meta.loadavg.join(" ")}, ` +
  `${meta.durationS.toFixed(0)} s${quick ? " (quick)" : ""}; dev cluster: ${meta.cluster}`;
process.stdout.write(renderMarkdown(results, targets, header));

/** JSON: fractions to 3 decimals (∞ and NaN become null). */
const replacer = (_key: string, value: unknown) =>
  typeof value === "number" && !Number.isInteger(value) ? round3(value) : value;
mkdirSync(dirname(outPath), { recursive: true });
writeFileSync(outPath, `${JSON.stringify({ meta, results, targets }, replacer, 2)}\n`);
log(`wrote ${outPath}`);
