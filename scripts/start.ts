/**
 * `npm start`: the example Worker (functions/worker.ts) inside workerd via Miniflare, against a local
 * 3-node dev cluster. Fires bursts of concurrent requests at one invoice and at many invoices, with
 * all nodes up, with one node paused (SIGSTOP: a quorum of 2 still answers), and with two paused (no
 * quorum), and prints what happened. Then fires the Worker's Cron Trigger for one scheduled time
 * five times at once and once more afterwards (duplicate deliveries): the report is rebuilt once,
 * the duplicates are skipped with `noRetry()`. Node requests are counted at the nodes' own
 * endpoints.
 *
 * Run: npm start   (about 12 s; no network beyond 127.0.0.1)
 */
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { createLocks } from "../src";
import { type DevCluster, startDevCluster } from "../src/dev";

const BURST = 10;

interface Row {
  scenario: string;
  requests: number;
  ran: number;
  busy: number;
  unavailable: number;
  other: number;
  medianMs: number;
  nodeRequests: number;
}

/** Bundle the Worker the way wrangler would (workerd conditions, ESM, everything inlined). */
async function bundleWorker(): Promise<string> {
  const result = await build({
    entryPoints: [new URL("../functions/worker.ts", import.meta.url).pathname],
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

async function burst(
  mf: Miniflare,
  cluster: DevCluster,
  scenario: string,
  paths: string[],
): Promise<Row> {
  for (const control of cluster.controls) control.resetStats();
  const timed = await Promise.all(
    paths.map(async (path) => {
      const started = performance.now();
      const res = await mf.dispatchFetch(`http://localhost${path}`, { method: "POST" });
      await res.arrayBuffer();
      return { status: res.status, ms: performance.now() - started };
    }),
  );
  const count = (status: number) => timed.filter((t) => t.status === status).length;
  const ran = count(200);
  const busy = count(409);
  const unavailable = count(503);
  return {
    scenario,
    requests: paths.length,
    ran,
    busy,
    unavailable,
    other: paths.length - ran - busy - unavailable,
    medianMs: median(timed.map((t) => t.ms)),
    nodeRequests: await settledNodeRequests(cluster),
  };
}

function print(rows: Row[], nodes: number): void {
  const header = ["scenario", "reqs", "ran", "409", "503", "other", "median ms", "node reqs/req"];
  const lines = rows.map((r) => [
    r.scenario,
    String(r.requests),
    String(r.ran),
    String(r.busy),
    String(r.unavailable),
    String(r.other),
    String(r.medianMs),
    (r.nodeRequests / r.requests).toFixed(1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const format = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)));
  console.log(`\n${format(header).join("  ")}`);
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const line of lines) console.log(format(line).join("  "));
  console.log(
    [
      "",
      "ran = the handler ran (200); 409 = lock busy; 503 = no quorum (see Retry-After).",
      `node reqs/req = requests counted at the nodes' endpoints per HTTP request: one that ran costs`,
      `2N = ${2 * nodes} (acquire + release), a 409 costs N = ${nodes}, plus a cleanup release to each node`,
      "that timed out (a paused node still receives its requests).",
    ].join("\n"),
  );
}

/** The Worker's cron expression (wrangler.toml) and the demo's rebuild duration. */
const CRON = "0 3 * * *";
const DEMO_REPORT_MS = 1_000;
const CRON_BURST = 5;

/**
 * Deliver the cron event for one `scheduledTime` `CRON_BURST` times at once, then once more after
 * they finished, as an at-least-once scheduler may; count what the runtime reports per event.
 */
async function cronDuplicates(mf: Miniflare, cluster: DevCluster, prefix: string): Promise<void> {
  for (const control of cluster.controls) control.resetStats();
  const worker = await mf.getWorker();
  const scheduledTime = new Date(Date.UTC(2026, 0, 1, 3));
  const fire = () => worker.scheduled({ cron: CRON, scheduledTime });
  const started = performance.now();
  const burst = await Promise.all(Array.from({ length: CRON_BURST }, fire));
  const burstMs = performance.now() - started;
  const late = await fire();
  const all = [...burst, late];
  const ran = all.filter((r) => r.outcome === "ok" && !r.noRetry).length;
  const skipped = all.filter((r) => r.outcome === "ok" && r.noRetry).length;
  const failed = all.length - ran - skipped;
  const nodeRequests = await settledNodeRequests(cluster);
  const key = `scheduled:${CRON}:${scheduledTime.getTime()}`;
  const marker = await createLocks({ nodes: cluster.nodes, prefix }).inspect(key);
  const kept = marker.nodes.filter((o) => o.status === "done" && (o.pttl ?? 0) > 0);
  const hours = Math.max(...kept.map((o) => o.pttl ?? 0)) / 3_600_000;
  console.log(
    [
      "",
      `cron "${CRON}" @ ${scheduledTime.toISOString()}: ${CRON_BURST} deliveries at once, then 1 late`,
      `  ran ${ran}, skipped ${skipped} (noRetry), failed ${failed}; burst took ${Math.round(burstMs)} ms`,
      `  done marker on ${kept.length}/${cluster.nodes.length} nodes, kept ${hours.toFixed(1)} h;` +
        ` node requests ${nodeRequests}`,
      `  (a run costs 4N: its lock + the report lock + release + done marker; a skip costs N = ${cluster.nodes.length})`,
    ].join("\n"),
  );
  if (ran !== 1 || failed !== 0) throw new Error(`cron dedupe: ran ${ran}, failed ${failed}`);
}

async function main(): Promise<void> {
  let cluster: DevCluster | undefined;
  let mf: Miniflare | undefined;
  try {
    console.log("edgelock demo: starting a 3-node dev cluster and the Worker in workerd…");
    cluster = await startDevCluster({ nodes: 3 });
    const script = await bundleWorker();
    const prefix = `demo:${crypto.randomUUID().slice(0, 8)}:`;
    mf = new Miniflare({
      modules: true,
      script,
      compatibilityDate: "2025-09-01",
      compatibilityFlags: ["nodejs_compat"],
      cf: false,
      bindings: {
        EDGELOCK_NODES: JSON.stringify(cluster.nodes),
        LOCK_PREFIX: prefix,
        REPORT_MS: String(DEMO_REPORT_MS),
      },
    });
    await mf.ready;

    const rows: Row[] = [];
    let round = 0;
    const scenarios = async (label: string) => {
      round += 1;
      const same = Array.from({ length: BURST }, () => `/invoices/inv-${round}/charge`);
      const different = Array.from(
        { length: BURST },
        (_, i) => `/invoices/inv-${round}-${i}/charge`,
      );
      rows.push(
        await burst(mf as Miniflare, cluster as DevCluster, `${label}: same invoice`, same),
      );
      rows.push(
        await burst(
          mf as Miniflare,
          cluster as DevCluster,
          `${label}: ${BURST} invoices`,
          different,
        ),
      );
    };

    await scenarios("3/3 nodes up");
    cluster.controls[2]?.pause();
    await scenarios("node 2 paused");
    cluster.controls[1]?.pause();
    await scenarios("nodes 1+2 paused");
    for (const control of cluster.controls) control.resume();

    print(rows, cluster.nodes.length);
    await cronDuplicates(mf, cluster, prefix);
  } finally {
    await mf?.dispose().catch(() => {});
    await cluster?.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error("edgelock demo failed:", error);
    process.exit(1);
  },
);
