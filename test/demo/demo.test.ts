/**
 * `npm start` as a newcomer sees it: every row of the demo asserted, not eyeballed. Short mode (5
 * requests per burst, the concurrency limit's burst too) with the same scenarios as the real run.
 */
import { describe, expect, it } from "vitest";
import { type DemoSummary, type Row, runDemo } from "../../scripts/demo/run";

const BURST = 5;

describe("npm start (the demo)", () => {
  let demo: DemoSummary;
  const row = (scenario: string): Row => {
    const found = demo.rows.find((r) => r.scenario === scenario);
    if (found === undefined) throw new Error(`no row "${scenario}"`);
    return found;
  };
  const counts = (r: Row) => [r.requests, r.charged, r.ran + r.busy, r.unavailable, r.other];

  it("runs the example Worker in workerd and prints the table and the cron part", async () => {
    demo = await runDemo({ burst: BURST, cronBurst: 5, print: () => {} });
    expect(demo.rows.map((r) => r.scenario)).toEqual([
      "3/3 nodes up: same invoice",
      `3/3 nodes up: ${BURST} invoices`,
      "node 2 paused: same invoice",
      `node 2 paused: ${BURST} invoices`,
      "nodes 1+2 paused: same invoice",
      `nodes 1+2 paused: ${BURST} invoices`,
    ]);
    const text = demo.lines.join("\n");
    expect(text).toContain("scenario");
    // One charge, or none after a split vote (see below).
    expect(text).toMatch(/3\/3 nodes up: same invoice +5 +\d+ +[01] +\d+ +\d+ +0 /);
    expect(text).toContain(
      'Cron Trigger "0 3 * * *" for 2026-01-01T03:00:00.000Z: 5 deliveries at once, then 1 late',
    );
    // The Worker's own skip lines, prefixed, each saying why; never "running, skipped".
    const skips = demo.lines.filter((l) => l.startsWith("  worker log: "));
    expect(skips).toHaveLength(5);
    for (const line of skips) {
      expect(line).toMatch(
        /^ {2}worker log: cron "0 3 \* \* \*" @ 2026-01-01T03:00:00\.000Z: delivery skipped, (another delivery of this scheduled time is running the job|this scheduled time already ran \(its done marker is on the nodes\))$/,
      );
    }
    expect(skips.at(-1)).toContain("already ran");
    expect(text).not.toMatch(/running, skipped/);
    expect(text).toContain("  ran 1, skipped 5, failed 0;");
    expect(text).toContain("a skipped delivery calls noRetry(): the runtime counts it as done");
    expect(text).toContain("the report lock (it keeps this rebuild and one");
    expect(text).toMatch(/ {2}done marker on 3\/3 nodes, kept \d+\.\d h; node requests \d+/);
  }, 120_000);

  it("one invoice is charged at most once per burst while a quorum answers; the rest are 409s", () => {
    for (const scenario of ["3/3 nodes up", "node 2 paused"]) {
      const same = row(`${scenario}: same invoice`);
      // [requests, charged, ran + 409, 503, other]
      const { requests, charged, unavailable, other } = same;
      const answered = same.ran + same.busy;
      expect([requests, other]).toEqual([BURST, 0]);
      if (charged === 1) {
        expect([answered, unavailable]).toEqual([BURST, 0]);
      } else {
        // A split vote: concurrent callers each got some nodes, none a majority, so each of them
        // is told 503 (nobody holds it) and the rest 409 (held by them); the middleware does not
        // retry (wait 0). With only two nodes answering this happens now and then.
        expect(charged).toBe(0);
        expect(unavailable).toBeGreaterThanOrEqual(2);
        expect(answered + unavailable).toBe(BURST);
      }
      expect(counts(row(`${scenario}: ${BURST} invoices`))).toEqual([BURST, BURST, BURST, 0, 0]);
    }
  });

  it("every 503 has its Worker log line, kept with its row and printed under the table, prefixed", () => {
    const n = demo.nodes;
    for (const r of demo.rows) {
      expect(r.log, r.scenario).toHaveLength(r.unavailable);
      for (const line of r.log) {
        // The route, the key, the cause in words, then each node's answer: hosts, never a token.
        expect(line).toMatch(
          new RegExp(
            String.raw`^edgelock: 503 for POST /invoices/(inv-\d+(?:-\d+)?)/charge \(lock "invoice:\1"\): too few lock nodes answered: no majority \(${Math.floor(n / 2) + 1} of ${n} nodes needed; .*\)(: node \d \(127\.0\.0\.1:\d+\): [^;]+)(; node \d \(127\.0\.0\.1:\d+\): [^;]+)*$`,
          ),
        );
      }
    }
    const lines = demo.lines;
    // Never interleaved with the table: every 503 line is printed after it, under its scenario.
    const legend = lines.findIndex((l) => l.startsWith("that timed out"));
    const heading = lines.indexOf(
      "The Worker's log during the bursts: one line per 503, naming the route, the key and why",
    );
    expect(legend).toBeGreaterThan(0);
    expect(heading).toBe(legend + 2);
    expect(lines[heading + 1]).toBe(
      "(the lock middleware's default; never a token; its onUnavailable option replaces it)",
    );
    const logged = lines.filter((l) => l.includes("edgelock: 503"));
    for (const line of logged)
      expect(line.startsWith("    worker log: edgelock: 503 for POST ")).toBe(true);
    expect(lines.findIndex((l) => l.includes("edgelock: 503"))).toBeGreaterThan(heading);
    const paused = lines.indexOf(`  nodes 1+2 paused: same invoice (${BURST} × 503):`);
    expect(lines.slice(paused + 1, paused + 4)).toEqual([
      expect.stringMatching(/^ {4}worker log: edgelock: 503 for POST \/invoices\/inv-3\/charge /),
      expect.stringMatching(/^ {4}worker log: edgelock: 503 for POST \/invoices\/inv-3\/charge /),
      `    … ${BURST - 2} more like these`,
    ]);
    expect(lines).toContain(`  nodes 1+2 paused: ${BURST} invoices (${BURST} × 503):`);
    // Two lines shown per row, the rest counted.
    expect(logged).toHaveLength(demo.rows.reduce((sum, r) => sum + Math.min(2, r.log.length), 0));
  });

  it("with two of three nodes paused every request is a 503 (no quorum), never a 409", () => {
    for (const scenario of ["same invoice", `${BURST} invoices`]) {
      const r = row(`nodes 1+2 paused: ${scenario}`);
      expect([r.ran, r.busy, r.unavailable, r.other]).toEqual([0, 0, BURST, 0]);
    }
  });

  it("node requests per HTTP request: 2N for a charge, N for a 409, more only for paused nodes", () => {
    const n = demo.nodes;
    const up = row(`3/3 nodes up: ${BURST} invoices`);
    expect(up.nodeRequests).toBe(2 * n * BURST);
    const same = row("3/3 nodes up: same invoice");
    // (A split vote adds failed rounds and their cleanups: counted only without one.)
    if (same.unavailable === 0) expect(same.nodeRequests).toBe(2 * n * same.ran + n * same.busy);
    // A paused node still receives its requests (and failed rounds' cleanups): bounded above.
    for (const r of demo.rows) expect(r.nodeRequests / r.requests).toBeLessThanOrEqual(3 * n);
  });

  it("retries with one Idempotency-Key: one charge, the rest 409 or replayed, another body 422", () => {
    const { idempotency } = demo;
    expect(idempotency.charged).toBe(1);
    // The first burst: one charges, the others find it in progress; the later ones are replays.
    expect(idempotency.inProgress + idempotency.replayed).toBe(2 * BURST - 1);
    expect(idempotency.replayed).toBeGreaterThanOrEqual(BURST);
    expect([idempotency.mismatched, idempotency.other]).toEqual([1, 0]);
    expect(demo.lines.join("\n")).toMatch(
      /Idempotency-Key "retry-[0-9a-f]{8}" on one charge: 5 requests at once, 5 retries after, 1 with another body\n {2}charged 1, in progress \(409\) \d+, replayed \d+ \(Idempotency-Replayed: true\), another body \(422\) 1, other 0/,
    );
  });

  it("the cron job ran once for its scheduled time; its done marker is on every node for ~24 h", () => {
    const { cron } = demo;
    expect([cron.deliveries, cron.ran, cron.skipped, cron.failed]).toEqual([6, 1, 5, 0]);
    expect(cron.markerNodes).toBe(3);
    expect(cron.keptMs).toBeGreaterThan(23 * 3_600_000);
    expect(cron.keptMs).toBeLessThanOrEqual(24 * 3_600_000);
  });

  it("a burst through limit({ permits: 3 }): every export runs, never more than three at once", () => {
    const { limit } = demo;
    expect([limit.requests, limit.exported, limit.tooMany, limit.other]).toEqual([
      BURST,
      BURST,
      0,
      0,
    ]);
    expect(limit.mostRunning).toBeLessThanOrEqual(3);
    // The permits are used: the exports did not run one at a time.
    expect(limit.mostRunning).toBeGreaterThan(1);
    const text = demo.lines.join("\n");
    expect(text).toContain(
      `Concurrency limit: ${BURST} requests at once to POST /exports/:id, limit({ permits: 3, wait: 10_000 })`,
    );
    expect(text).toContain(
      `  exported ${BURST}, 429 0, other 0; at most ${limit.mostRunning} running at once (the Worker counts its renders)`,
    );
    expect(text).toMatch(
      / {2}the burst took \d+ ms: 2 turns of 300 ms, 3 at a time; the others waited for a permit/,
    );
    expect(text).toMatch(
      / {2}node requests \d+ \(\d+\.\d per request; an uncontended permit costs 2N = 6/,
    );
  });
});
