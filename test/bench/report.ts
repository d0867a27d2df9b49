/**
 * Output of the lock bench: the markdown tables printed to stdout (the JSON document is written
 * by locks.ts).
 *
 * @module
 */
import type { ContentionRow } from "./contention";
import type { SlowMinorityResult } from "./slow-minority";
import { type BenchResults, fx, ms, type TargetResult } from "./targets";

const CONDITION_LABELS: Record<SlowMinorityResult["rows"][number]["condition"], string> = {
  none: "no fault",
  latency: "+{ms} ms latency on the last node",
  paused: "last node's redis-server paused",
  without: "4 nodes only, no fault (informational: quorum 3 of 4)",
};

function row(cells: readonly (string | number)[]): string {
  return `| ${cells.join(" | ")} |`;
}

/** edgelock's acquire rounds per completed section, and how many of them found the lock busy. */
function roundsCell(r: ContentionRow): string {
  if (r.acquireRounds === undefined || r.sections === 0) return "—";
  const all = Object.values(r.acquireRounds).reduce((a, b) => a + b, 0);
  const busy = r.acquireRounds.busy ?? 0;
  return `${fx(all / r.sections, 1)} (${fx(busy / r.sections, 1)})`;
}

function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  return [row(header), row(header.map(() => "---")), ...rows.map(row)].join("\n");
}

const NOTES = {
  uncontended:
    "\nraw-N waits for every node in each round (the floor the target is judged against); " +
    "raw-N-quorum resolves each round at the ⌊N/2⌋+1-th reply like edgelock, so edgelock − " +
    "raw-N-quorum is library overhead. REST contenders use one @upstash/redis configuration " +
    "(edgelock's own: no retries, no auto-pipelining, no telemetry); upstash-lock-defaults uses " +
    "`new Redis({ url, token })`. redlock-N is TCP: a different transport, for reference.",
  slowMinority:
    "\nA round is decided at the 3rd answer: without the faulted node that is the 3rd of 4. On a " +
    "CPU-bound machine fewer concurrent requests also make each faster, hence ratios below 1. " +
    "'Rounds seeing a holder': one client acquiring one key back to back, so any holder is its " +
    "own earlier grant still on a node.",
  contention:
    "\nThroughput on this machine is bounded by how many REST requests/s it can serve (see " +
    "node requests/s); node-redlock's pipelined TCP commands are far cheaper. Floor of node " +
    "requests/section: 2 per node (acquire + release). edgelock-N: 32 callers of one `Locks` " +
    "(one isolate: local line and handover); edgelock-N-clients: one `Locks` per worker " +
    "(independent invocations: the nodes' queues and hand-off; each SSE stream counts as one " +
    "request); edgelock-N-polling: the same over nodes given as a `RedisLike` without " +
    "`subscribe`, so they poll as edgelock 0.1 did.",
};

/** The markdown report of one run. */
export function renderMarkdown(
  results: BenchResults,
  targets: readonly TargetResult[],
  header: string,
): string {
  const out: string[] = [header];
  const u = results.uncontended;
  if (u !== undefined) {
    out.push(
      `\n### 1. Uncontended acquire + release (${u.rounds} interleaved rounds${u.truncated ? ", cut by the time limit" : ""})\n`,
      table(
        [
          "contender",
          "library",
          "transport",
          "nodes",
          "p50 ms",
          "p90 ms",
          "p99 ms",
          "mean ms",
          "rounds seeing a holder",
          "errors",
        ],
        u.rows.map((r) => [
          r.id,
          r.library,
          r.transport,
          r.nodes,
          ms(r.summary.p50),
          ms(r.summary.p90),
          ms(r.summary.p99),
          ms(r.summary.mean),
          r.roundsSeeingHolder === undefined ? "—" : `${fx(100 * r.roundsSeeingHolder, 0)} %`,
          r.errors === 0 ? 0 : `${r.errors} (last: ${r.lastError})`,
        ]),
      ),
      NOTES.uncontended,
    );
  }
  const s = results.slowMinority;
  if (s !== undefined) {
    const none = s.rows.find((r) => r.condition === "none")?.summary.p50 ?? Number.NaN;
    out.push(
      `\n### 2. Slow minority (edgelock, ${s.nodes} nodes, last node faulted)\n`,
      table(
        [
          "condition",
          "n",
          "p50 ms",
          "p99 ms",
          "p50 / no-fault p50",
          "rounds seeing a holder",
          "errors",
        ],
        s.rows.map((r) => [
          CONDITION_LABELS[r.condition].replace("{ms}", String(s.latencyMs)),
          r.summary.n,
          ms(r.summary.p50),
          ms(r.summary.p99),
          `${fx(r.summary.p50 / none)}×`,
          `${fx(100 * r.roundsSeeingHolder, 0)} %`,
          r.errors === 0 ? 0 : `${r.errors} (last: ${r.lastError})`,
        ]),
      ),
      NOTES.slowMinority,
    );
  }
  const c = results.contention;
  if (c !== undefined) {
    const { workers, holdMs, durationMs } = c.options;
    out.push(
      `\n### 3. Contention (${workers} workers, one key, ${holdMs} ms hold, ${durationMs / 1000} s)\n`,
      table(
        [
          "contender",
          "nodes",
          "sections/s",
          "node requests/section",
          "node requests/s",
          "counted by",
          "p50 wait ms",
          "p99 wait ms",
          "acquire rounds/section (busy)",
          "hand-off gap p50 / mean ms",
          "bench CPU, loop p99 ms",
          "first grant ms",
          "errors",
          "overlaps",
        ],
        c.rows.map((r) => [
          r.id,
          r.nodes,
          fx(r.sectionsPerSecond, 1),
          fx(r.requestsPerSection),
          fx(r.nodeRequests / (durationMs / 1_000), 0),
          r.counting,
          ms(r.wait.p50),
          ms(r.wait.p99),
          roundsCell(r),
          `${fx(r.gap.p50, 0)} / ${fx(r.gap.mean, 0)}`,
          `${fx(100 * r.benchCpu, 0)} %, ${fx(r.loopDelayP99Ms, 0)}`,
          fx(r.firstGrantMs, 0),
          r.errors,
          r.overlaps,
        ]),
      ),
      NOTES.contention,
    );
  }
  const w = results.wan;
  if (w !== undefined) {
    const { workers, holdMs, durationMs, latency, far, rounds } = w.options;
    const farText = far === undefined ? "" : `, last node ${far[0]}–${far[1]} ms`;
    out.push(
      `\n### 7. WAN contention (every node request ${latency[0]}–${latency[1]} ms${farText}; ${workers} workers, one key, ${holdMs} ms hold, ${rounds} × ${durationMs / 1000} s each, interleaved; load ${w.load[0]} → ${w.load[1]})\n`,
      table(
        [
          "contender",
          "nodes",
          "sections/s",
          "of floor",
          "node requests/section",
          "p50 wait ms",
          "p99 wait ms",
          "max wait ms",
          "hand-off gap p50 / p90 / mean ms",
          "hold mean ms",
          "bench CPU, loop p99 ms",
          "first grant ms",
          "errors",
          "overlaps",
        ],
        w.rows.map((r) => [
          r.id,
          r.nodes,
          fx(r.sectionsPerSecond, 1),
          `${fx(r.sectionsPerSecond / w.floorSectionsPerSecond)}×`,
          fx(r.requestsPerSection),
          ms(r.wait.p50),
          ms(r.wait.p99),
          ms(r.wait.max),
          `${fx(r.gap.p50, 0)} / ${fx(r.gap.p90, 0)} / ${fx(r.gap.mean, 0)}`,
          fx(r.holdMeanMs, 1),
          `${fx(100 * r.benchCpu, 0)} %, ${fx(r.loopDelayP99Ms, 0)}`,
          fx(r.firstGrantMs, 0),
          r.errors,
          r.overlaps,
        ]),
      ),
      `\nPhysical floor: ${fx(w.floorSectionsPerSecond, 1)} sections/s (each hand-off costs at least the ${holdMs} ms hold plus one ${((latency[0] + latency[1]) / 2).toFixed(0)} ms round trip). ` +
        "edgelock-N-clients: one `Locks` per worker (independent invocations: the nodes' queues, " +
        "hand-off over SSE); -polling: the same over nodes that cannot stream (a `RedisLike` " +
        "without `subscribe`: polling, as edgelock 0.1); -lambda: a fresh `createLocks` per " +
        "acquire; edgelock-N: one shared `Locks` (the callers of one isolate). A wait still " +
        "running when a window ends counts with its elapsed time. Hand-off gap: from a release's " +
        "start to the next grant (the floor is one round trip). Hold mean: a grant to its release " +
        "call, the nominal hold plus the bench process's timer lateness (all workers share its " +
        "event loop and CPU, which independent clients would not). Bench CPU: the bench process's " +
        "CPU time ÷ the window (mean over rounds; 100 % = one core) and its event loop's p99 " +
        "delay (worst round). First grant: from a window's start to its first grant (mean " +
        "over rounds).",
    );
    if (w.head.length > 0) {
      out.push(
        "\n#### Absent head (the queue's first waiter frozen with its streams open, or its process killed)\n",
        table(
          ["head", "nodes", "release → next grant, ms", "bound (handMs + retryDelayMax) ms"],
          w.head.map((h) => [
            h.kind,
            h.nodes,
            h.idleMs.map((x) => fx(x, 0)).join(", "),
            `${h.boundMs} (${h.handMs} + ${h.retryDelayMax})`,
          ]),
        ),
      );
    }
  }
  if (results.cost !== undefined) {
    out.push(
      "\n### 4. Node requests (Workers subrequests) per uncontended locked request\n",
      table(
        ["contender", "nodes", "fencing", "at the endpoints", "charged to the budget", "expected"],
        results.cost.map((r) => [
          r.id,
          r.nodes,
          r.fencing ? "yes" : "no",
          fx(r.requestsPerLockedRequest),
          r.chargedPerLockedRequest === undefined ? "—" : fx(r.chargedPerLockedRequest),
          r.expected ?? "—",
        ]),
      ),
    );
  }
  const idem = results.idempotency;
  if (idem !== undefined && idem.length > 0) {
    out.push(
      "\n### 5. Idempotency-Key (Hono middleware; first request vs replay, interleaved)\n",
      table(
        [
          "nodes",
          "node requests / first",
          "node requests / replay",
          "first p50 ms",
          "replay p50 ms",
          "replay / first p50",
        ],
        idem.map((r) => [
          r.nodes,
          fx(r.requestsPerFirst),
          fx(r.requestsPerReplay),
          ms(r.first.p50),
          ms(r.replay.p50),
          `${fx(r.replay.p50 / r.first.p50)}×`,
        ]),
      ),
    );
  }
  if (results.bundle !== undefined) {
    out.push(
      "\n### 6. Bundle size (esbuild, ESM, neutral, minified; gzip -9)\n",
      table(
        ["entry", "min B", "min+gzip B", "external imports"],
        results.bundle.map((r) => [
          r.id,
          r.minBytes,
          r.gzipBytes,
          r.externalImports.join(", ") || "—",
        ]),
      ),
    );
  }
  if (targets.length > 0) {
    out.push(
      "\n### Targets\n",
      table(
        ["target", "measured", "limit", "result"],
        targets.map((t) => [t.target, t.measured, t.limit, t.met ? "MET" : "NOT MET"]),
      ),
    );
  }
  return `${out.join("\n")}\n`;
}
