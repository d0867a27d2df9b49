/**
 * Human-readable output of a safety run: the summary (acquisitions, faults by kind, violations,
 * seed) and, on failure, the replay command and the offending part of the history with times
 * relative to the first grant.
 *
 * @module
 */

import { intervalEnd, offendingGrants, type Violation } from "./checker";
import type { GrantRecord } from "./history";
import type { RunOptions, RunReport } from "./run";

/** The command that replays a run. */
export function replayCommand(options: RunOptions): string {
  const seconds = Math.round(options.durationMs / 1000);
  return [
    "npm run chaos --",
    `--seed ${options.seed}`,
    `--duration ${seconds}s`,
    `--clients ${options.clients}`,
    `--processes ${options.processes}`,
    `--keys ${options.keys}`,
    `--lease ${options.lease}`,
    `--profile ${options.profile}`,
    options.requestTimeout === undefined ? "" : `--request-timeout ${options.requestTimeout}`,
    options.nodes === undefined || options.nodes === 5 ? "" : `--nodes ${options.nodes}`,
    options.fencing ? "" : "--no-fencing",
    options.wake === true ? "--wake" : "",
  ]
    .filter((part) => part !== "")
    .join(" ");
}

const fmt = (t: number | undefined, origin: number) =>
  t === undefined ? "-" : `${(t - origin).toFixed(1)}`;

function describeGrant(g: GrantRecord, origin: number): string {
  const section =
    g.counter === undefined
      ? "no section"
      : g.counter.state === "done"
        ? `read ${g.counter.read} wrote ${g.counter.read + 1} (ack ${fmt(g.counter.ackAt, origin)})`
        : `${g.counter.state}: ${g.counter.why}`;
  const fenced =
    g.fenced === undefined
      ? ""
      : g.fenced.state === "done"
        ? ` fenced write ${g.fenced.accepted ? "accepted" : "REJECTED"}`
        : ` fenced ${g.fenced.state}`;
  return (
    `  ${g.id.padEnd(16)} key=${g.key} fence=${g.fence ?? "-"} granted=${fmt(g.granted, origin)} ` +
    `end=${fmt(intervalEnd(g), origin)} (validEnd=${fmt(g.validEnd, origin)}, ` +
    `release=${fmt(g.releaseStart, origin)} ${g.releaseStatus ?? "never"}) ${section}${fenced}`
  );
}

function describeViolation(v: Violation): string {
  switch (v.kind) {
    case "overlap":
      return `overlap on ${v.key}: ${v.grants.join(" and ")} held it together for ${v.overlapMs.toFixed(1)} ms (tolerance ${v.toleranceMs.toFixed(2)} ms)`;
    case "lost-update":
    case "fenced-lost-update":
      return `${v.kind} on ${v.key}: value ${v.value}, completed writes ${v.completed} (+${v.uncertain} uncertain); same value read by ${v.grants.join(", ") || "-"}`;
    case "fence-order":
      return `fence-order on ${v.key}: ${v.grants[0]} had fence ${v.fences[0]}, later ${v.grants[1]} got ${v.fences[1]}`;
    case "leftover":
      return `leftover on node ${v.node}: key ${v.key} still present after the run (pttl ${v.pttl})`;
  }
}

/** Multi-line summary; includes the offending history when there are violations. */
export function formatReport(report: RunReport): string {
  const { options, check, history } = report;
  const s = check.stats;
  const origin = Math.min(...history.grants.map((g) => g.requested), Number.POSITIVE_INFINITY);
  const byKind: Record<string, number> = {};
  for (const v of check.violations) byKind[v.kind] = (byKind[v.kind] ?? 0) + 1;
  const lines = [
    `edgelock chaos: seed ${options.seed}, profile ${options.profile}, ${Math.round(options.durationMs / 1000)} s, ` +
      `${options.nodes ?? 5} nodes, ${options.processes === 0 ? "1 process" : `${options.processes} processes`} × ${options.clients} clients, ` +
      `${options.keys} keys, lease ${options.lease} ms${options.requestTimeout === undefined ? "" : `, request timeout ${options.requestTimeout} ms`}, fencing ${options.fencing ? "on" : "off"}${options.wake === true ? ", wake on" : ""}`,
    `acquisitions: ${s.grants} granted; acquire rounds ${JSON.stringify(report.rounds)}; failed acquire calls ${JSON.stringify(report.failures)}`,
    `critical sections: ${s.sectionsCompleted} completed, ${s.sectionsAbandoned} abandoned (validity low), ${s.sectionsUncertain} uncertain, ${s.sectionsOverran} overran validity`,
    `fenced writes: ${s.fencedAccepted} accepted, ${s.fencedRejected} rejected; releases: ${s.released} released, ${s.expiredOnRelease} expired, ${s.unknownOnRelease} unknown, ${s.neverReleased} never (crashed holders); ${s.extended} extensions; ${s.lostSignals} lock signals aborted`,
    `faults injected: ${JSON.stringify(report.injected)}${Object.keys(report.skipped).length > 0 ? `; skipped ${JSON.stringify(report.skipped)}` : ""}`,
    `data loss: ${history.wipes.length} empty restarts; clock error bound per process (ms): ${JSON.stringify(
      Object.fromEntries(
        Object.entries(history.clockError).map(([k, v]) => [k, Number(v.toFixed(3))]),
      ),
    )}`,
    `after the run: ${history.leftovers.length} lock keys left on nodes, ${report.inspectHeld} nodes reporting a holder via inspect`,
    `excused fence regressions (a node lost its counters in between): ${check.excusedFenceRegressions.length}`,
    `violations: ${check.violations.length} ${JSON.stringify(byKind)}`,
  ];
  if (s.grants === 0 || report.nodeErrors.length > 0) {
    lines.push(`node errors seen (sample): ${report.nodeErrors.join(" | ") || "-"}`);
  }
  if (report.crashes.length > 0) {
    lines.push(`UNEXPECTED EXCEPTIONS (${report.crashes.length}):`, ...report.crashes.slice(0, 5));
  }
  if (check.violations.length > 0) {
    lines.push(`FAILED: seed ${options.seed}. Replay: ${replayCommand(options)}`);
    for (const v of check.violations.slice(0, 10)) {
      lines.push(describeViolation(v));
      for (const g of offendingGrants(history, v)) lines.push(describeGrant(g, origin));
    }
    if (check.violations.length > 10) lines.push(`… ${check.violations.length - 10} more`);
    if (history.wipes.length > 0) {
      lines.push(
        `empty restarts at: ${history.wipes.map((w) => `node ${w.node} @${fmt(w.at, origin)}`).join(", ")}`,
      );
    }
  }
  return lines.join("\n");
}
