/**
 * The `npm start` demo as a function: the example Worker (functions/worker.ts) inside workerd via
 * Miniflare, against a local 3-node dev cluster (redis-servers, or in-memory nodes on a machine
 * without redis-server: the first lines say which). Fires bursts of concurrent requests at one
 * invoice and at many invoices, with all nodes up, with one node paused (SIGSTOP: a quorum of 2
 * still answers), and with two paused (no quorum); then fires the Worker's Cron Trigger for one
 * scheduled time several times at once and once more afterwards (duplicate deliveries), and sends
 * a burst through the concurrency limit of `POST /exports/:id` (`./limit.ts`). Node requests are
 * counted at the nodes' own endpoints.
 *
 * {@link runDemo} returns what it measured and the lines it would print, so that a test asserts
 * every row a newcomer sees (test/demo/demo.test.ts); scripts/start.ts prints them.
 *
 * @module
 */
import { createInterface } from "node:readline";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { EXPORT_PERMITS } from "../../functions/app";
import { createLocks } from "../../src";
import { type DevCluster, type DevClusterOptions, startDevCluster } from "../../src/dev";
import { backendLine } from "../../src/dev/cli/dev";
import { exportBurst, type LimitSummary } from "./limit";

/** One burst of requests and what came back. */
export interface Row {
  readonly scenario: string;
  readonly requests: number;
  /** Answered 200 (the handler ran). */
  readonly ran: number;
  /** Answered 200 with `status: "charged"`: the invoice was charged by this request. */
  readonly charged: number;
  readonly busy: number;
  readonly unavailable: number;
  readonly other: number;
  readonly medianMs: number;
  readonly nodeRequests: number;
  /**
   * What the Worker logged during the burst: one line per 503, the lock middleware's default
   * `onUnavailable` (route, key, and why, never a token).
   */
  readonly log: readonly string[];
}

/** The cron part: deliveries of one scheduled time, and the done marker left on the nodes. */
export interface CronSummary {
  readonly deliveries: number;
  readonly ran: number;
  readonly skipped: number;
  readonly failed: number;
  /** Nodes keeping the done marker, and the longest retention left on them (ms). */
  readonly markerNodes: number;
  readonly keptMs: number;
  readonly nodeRequests: number;
}

/** The Idempotency-Key part: retries of one charge with one key. */
export interface IdempotencySummary {
  /** Sent at once; then as many again after the first finished; then one with another body. */
  readonly burst: number;
  readonly charged: number;
  readonly inProgress: number;
  readonly replayed: number;
  readonly mismatched: number;
  readonly other: number;
}

/** What {@link runDemo} measured, and the lines it printed (or would print). */
export interface DemoSummary {
  readonly nodes: number;
  /** What ran the nodes. */
  readonly backend: "redis" | "memory";
  readonly rows: readonly Row[];
  readonly idempotency: IdempotencySummary;
  readonly cron: CronSummary;
  readonly limit: LimitSummary;
  readonly lines: readonly string[];
}

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Requests per burst. @default 10 */
  readonly burst?: number;
  /** Cron deliveries at once (one more follows). @default 5 */
  readonly cronBurst?: number;
  /** Where each printed line goes. @default console.log */
  readonly print?: (line: string) => void;
  /** What runs the nodes (see `startDevCluster`). @default "auto" */
  readonly backend?: DevClusterOptions["backend"];
}

/** Bundle the Worker the way wrangler would (workerd conditions, ESM, everything inlined). */
async function bundleWorker(): Promise<string> {
  const result = await build({
    entryPoints: [new URL("../../functions/worker.ts", import.meta.url).pathname],
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    write: false,
    logLevel: "warning",
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error("esbuild produced no output");
  return output.text;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const value = sorted.length % 2 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  return Math.round(value ?? 0);
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Total node requests, once the background releases (waitUntil) have stopped adding to it. */
async function settledNodeRequests(cluster: DevCluster): Promise<number> {
  const total = () => cluster.controls.reduce((sum, c) => sum + c.stats().requests, 0);
  let last = -1;
  for (let current = total(); current !== last; current = total()) {
    last = current;
    await sleep(700); // longer than one per-request timeout (500 ms for the 5 s invoice lease)
  }
  return last;
}

/**
 * Fire `paths` at once. `log` is where the demo puts the Worker's console lines meanwhile; they
 * are kept in the row (a 503's line arrives on workerd's stderr a little after its response).
 */
async function burst(
  mf: Miniflare,
  cluster: DevCluster,
  scenario: string,
  paths: string[],
  log: readonly string[],
): Promise<Row> {
  for (const control of cluster.controls) control.resetStats();
  const timed = await Promise.all(
    paths.map(async (path) => {
      const started = performance.now();
      const res = await mf.dispatchFetch(`http://localhost${path}`, { method: "POST" });
      const body = await res.text();
      const charged = res.status === 200 && body.includes('"status":"charged"');
      return { status: res.status, charged, ms: performance.now() - started };
    }),
  );
  const count = (status: number) => timed.filter((t) => t.status === status).length;
  const ran = count(200);
  const busy = count(409);
  const unavailable = count(503);
  const nodeRequests = await settledNodeRequests(cluster);
  const deadline = performance.now() + 2_000;
  while (log.length < unavailable && performance.now() < deadline) await sleep(20);
  return {
    scenario,
    requests: paths.length,
    ran,
    charged: timed.filter((t) => t.charged).length,
    busy,
    unavailable,
    other: paths.length - ran - busy - unavailable,
    medianMs: median(timed.map((t) => t.ms)),
    nodeRequests,
    log: [...log],
  };
}

/** The table of bursts, as printed. */
function table(rows: readonly Row[], nodes: number): string[] {
  const header = [
    "scenario",
    "reqs",
    "ran",
    "charged",
    "409",
    "503",
    "other",
    "median ms",
    "node reqs/req",
  ];
  const lines = rows.map((r) => [
    r.scenario,
    String(r.requests),
    String(r.ran),
    String(r.charged),
    String(r.busy),
    String(r.unavailable),
    String(r.other),
    String(r.medianMs),
    (r.nodeRequests / r.requests).toFixed(1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const format = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)));
  return [
    "",
    format(header).join("  "),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...lines.map((line) => format(line).join("  ")),
    "",
    "ran = the handler ran (200), charged = it charged the invoice; 409 = lock busy;",
    "503 = no quorum: too few nodes answered (Retry-After; the Worker logs why: see below).",
    `node reqs/req = requests counted at the nodes' endpoints per HTTP request: one that ran costs`,
    `2N = ${2 * nodes} (acquire + release), a 409 costs N = ${nodes}, plus a cleanup release to each node`,
    "that timed out (a paused node still receives its requests).",
  ];
}

/** Lines of a row's log printed in full; the rest are counted (they repeat the same cause). */
const SHOWN = 2;

/** The Worker's log of the bursts, under the scenario that produced it. */
function burstLog(rows: readonly Row[]): string[] {
  const logged = rows.filter((r) => r.log.length > 0);
  if (logged.length === 0) return [];
  const lines = [
    "",
    "The Worker's log during the bursts: one line per 503, naming the route, the key and why",
    "(the lock middleware's default; never a token; its onUnavailable option replaces it)",
  ];
  for (const row of logged) {
    lines.push(`  ${row.scenario} (${row.unavailable} × 503):`);
    for (const line of row.log.slice(0, SHOWN)) lines.push(`    worker log: ${line}`);
    const more = row.log.length - SHOWN;
    if (more > 0) lines.push(`    … ${more} more like these`);
  }
  return lines;
}

/**
 * A client retrying one charge with one `Idempotency-Key`: `size` requests at once (one charges,
 * the others find it in progress), `size` more once it finished (replayed), and one with another
 * body (422).
 */
async function idempotentRetries(
  mf: Miniflare,
  size: number,
): Promise<{ summary: IdempotencySummary; lines: string[] }> {
  const key = `"retry-${crypto.randomUUID().slice(0, 8)}"`;
  const send = async (body: string) => {
    const res = await mf.dispatchFetch("http://localhost/invoices/inv-retry/charge", {
      method: "POST",
      headers: { "Idempotency-Key": key, "Content-Type": "application/json" },
      body,
    });
    const text = await res.text();
    return {
      status: res.status,
      charged: res.status === 200 && text.includes('"status":"charged"'),
      replayed: res.headers.get("idempotency-replayed") === "true",
    };
  };
  const first = await Promise.all(Array.from({ length: size }, () => send('{"amount":5}')));
  const later = await Promise.all(Array.from({ length: size }, () => send('{"amount":5}')));
  const changed = await send('{"amount":500}');
  const all = [...first, ...later, changed];
  const summary: IdempotencySummary = {
    burst: size,
    charged: all.filter((r) => r.charged && !r.replayed).length,
    inProgress: all.filter((r) => r.status === 409).length,
    replayed: all.filter((r) => r.replayed).length,
    mismatched: all.filter((r) => r.status === 422).length,
    other: all.filter((r) => !r.charged && !r.replayed && r.status !== 409 && r.status !== 422)
      .length,
  };
  const lines = [
    "",
    `Idempotency-Key ${key} on one charge: ${size} requests at once, ${size} retries after, 1 with another body`,
    `  charged ${summary.charged}, in progress (409) ${summary.inProgress}, replayed ${summary.replayed}` +
      ` (Idempotency-Replayed: true), another body (422) ${summary.mismatched}, other ${summary.other}`,
  ];
  return { summary, lines };
}

/** The Worker's cron expression (wrangler.toml) and the demo's rebuild duration. */
const CRON = "0 3 * * *";
/** The job's `name` in functions/worker.ts: part of its dedupe key. */
const JOB = "daily-report";
const DEMO_REPORT_MS = 1_000;
/** How long one export renders in the demo (`EXPORT_MS`). */
const DEMO_EXPORT_MS = 300;

/**
 * Deliver the cron event for one `scheduledTime` `times` times at once, then once more after
 * they finished, as an at-least-once scheduler may; count what the runtime reports per event.
 */
async function cronDuplicates(
  mf: Miniflare,
  cluster: DevCluster,
  prefix: string,
  times: number,
  workerLog: string[],
): Promise<{ summary: CronSummary; lines: string[] }> {
  workerLog.length = 0;
  for (const control of cluster.controls) control.resetStats();
  const worker = await mf.getWorker();
  const scheduledTime = new Date(Date.UTC(2026, 0, 1, 3));
  const fire = () => worker.scheduled({ cron: CRON, scheduledTime });
  const started = performance.now();
  const burst = await Promise.all(Array.from({ length: times }, fire));
  const burstMs = performance.now() - started;
  const late = await fire();
  const all = [...burst, late];
  const ran = all.filter((r) => r.outcome === "ok" && !r.noRetry).length;
  const skipped = all.filter((r) => r.outcome === "ok" && r.noRetry).length;
  const failed = all.length - ran - skipped;
  const nodeRequests = await settledNodeRequests(cluster);
  const key = `scheduled:${JOB}:${CRON}:${scheduledTime.getTime()}`;
  const marker = await createLocks({ nodes: cluster.nodes, prefix }).inspect(key);
  const kept = marker.nodes.filter((o) => o.status === "done" && (o.pttl ?? 0) > 0);
  const keptMs = Math.max(0, ...kept.map((o) => o.pttl ?? 0));
  const n = cluster.nodes.length;
  const summary: CronSummary = {
    deliveries: all.length,
    ran,
    skipped,
    failed,
    markerNodes: kept.length,
    keptMs,
    nodeRequests,
  };
  // The Worker's own skip lines: workerd writes them on its stdout, a little after the event.
  const deadline = performance.now() + 2_000;
  while (workerLog.filter((l) => l.includes("skipped")).length < skipped) {
    if (performance.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const lines = [
    "",
    `Cron Trigger "${CRON}" for ${scheduledTime.toISOString()}: ${times} deliveries at once, then 1 late`,
    "  (duplicates, as an at-least-once scheduler may send; the Worker's log, then the totals)",
    ...workerLog.map((line) => `  worker log: ${line}`),
    `  ran ${ran}, skipped ${skipped}, failed ${failed}; burst took ${Math.round(burstMs)} ms`,
    "  a skipped delivery calls noRetry(): the runtime counts it as done and does not retry it",
    `  done marker on ${kept.length}/${n} nodes, kept ${(keptMs / 3_600_000).toFixed(1)} h;` +
      ` node requests ${nodeRequests}`,
    `  a run costs 4N requests: the job's lock, the report lock (it keeps this rebuild and one`,
    `  started by POST /reports/daily/rebuild from overlapping), the release, the done marker;`,
    `  a skip costs N = ${n}`,
  ];
  return { summary, lines };
}

/**
 * Run the demo: start a 3-node dev cluster and the example Worker in workerd, fire the bursts and
 * the cron duplicates, print each line through `print`, stop everything, and return the summary.
 *
 * @example
 * const { rows, cron } = await runDemo({ burst: 5, print: () => {} });
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoSummary> {
  const { burst: size = 10, cronBurst = 5, print = console.log, backend = "auto" } = options;
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    print(line);
  };
  let cluster: DevCluster | undefined;
  let mf: Miniflare | undefined;
  try {
    say("edgelock demo: starting a 3-node dev cluster and the Worker in workerd…");
    cluster = await startDevCluster({ nodes: 3, backend });
    say(`edgelock demo: the nodes run ${backendLine(cluster)}`);
    const script = await bundleWorker();
    const prefix = `demo:${crypto.randomUUID().slice(0, 8)}:`;
    // No compatibility flags: the library needs no Node.js APIs (wrangler.toml sets none either).
    const workerLog: string[] = [];
    let cronStarted = false;
    /** Where the Worker's lines go during a burst: its row, printed under the table. */
    let burstSink: string[] | undefined;
    const workerLine = (line: string) => {
      if (burstSink !== undefined) burstSink.push(line);
      else if (cronStarted) workerLog.push(line);
      // Elsewhere (none in a healthy run), a line shows at once, prefixed.
      else say(`worker log: ${line}`);
    };
    mf = new Miniflare({
      // The Worker's console lines (console.error on stderr): kept with the burst or the cron
      // part they belong to and printed there with a prefix, not interleaved with the report.
      handleRuntimeStdio: (stdout, stderr) => {
        createInterface({ input: stdout }).on("line", workerLine);
        createInterface({ input: stderr }).on("line", workerLine);
      },
      modules: true,
      script,
      compatibilityDate: "2025-09-01",
      cf: false,
      bindings: {
        EDGELOCK_NODES: JSON.stringify(cluster.nodes),
        LOCK_PREFIX: prefix,
        REPORT_MS: String(DEMO_REPORT_MS),
        EXPORT_MS: String(DEMO_EXPORT_MS),
      },
    });
    await mf.ready;
    const rows: Row[] = [];
    const scenarios = async (label: string, round: number) => {
      const same = Array.from({ length: size }, () => `/invoices/inv-${round}/charge`);
      const different = Array.from(
        { length: size },
        (_, i) => `/invoices/inv-${round}-${i}/charge`,
      );
      const running = { mf: mf as Miniflare, cluster: cluster as DevCluster };
      const fire = async (scenario: string, paths: string[]) => {
        burstSink = [];
        try {
          rows.push(await burst(running.mf, running.cluster, scenario, paths, burstSink));
        } finally {
          burstSink = undefined;
        }
      };
      await fire(`${label}: same invoice`, same);
      await fire(`${label}: ${size} invoices`, different);
    };
    await scenarios("3/3 nodes up", 1);
    cluster.controls[2]?.pause();
    await scenarios("node 2 paused", 2);
    cluster.controls[1]?.pause();
    await scenarios("nodes 1+2 paused", 3);
    for (const control of cluster.controls) control.resume();
    for (const line of table(rows, cluster.nodes.length)) say(line);
    for (const line of burstLog(rows)) say(line);
    const retries = await idempotentRetries(mf, size);
    for (const line of retries.lines) say(line);
    cronStarted = true;
    const cron = await cronDuplicates(mf, cluster, prefix, cronBurst, workerLog);
    for (const line of cron.lines) say(line);
    const exports = { size, permits: EXPORT_PERMITS, exportMs: DEMO_EXPORT_MS };
    const limit = await exportBurst(mf, cluster, exports, settledNodeRequests);
    for (const line of limit.lines) say(line);
    const idempotency = retries.summary;
    return {
      nodes: cluster.nodes.length,
      backend: cluster.backend,
      rows,
      idempotency,
      cron: cron.summary,
      limit: limit.summary,
      lines,
    };
  } finally {
    for (const control of cluster?.controls ?? []) control.resume();
    await mf?.dispose().catch(() => {});
    await cluster?.stop();
  }
}
