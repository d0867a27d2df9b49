/**
 * Long safety runs: `npm run chaos -- --duration 10m [--seed N] [--clients N] [--processes N]`.
 *
 * Starts a 5-node dev cluster (AOF) and a separate protected resource, plays a seeded fault
 * schedule (latency beyond the lease, 5xx and non-JSON replies, connection resets, hangs,
 * NOSCRIPT, minority pause/resume, minority kill and restart with and without data, with and
 * without a delay longer than the lease) while clients in several processes contend for a few
 * keys, then checks the recorded history (see test/safety/harness/checker.ts). Prints the summary;
 * on a violation prints the seed, the replay command and the offending history, and exits 1.
 *
 * @module
 */

import { parseArgs, USAGE } from "../test/safety/harness/args";
import { formatReport } from "../test/safety/harness/report";
import { runChaos } from "../test/safety/harness/run";

async function main(): Promise<number> {
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const { run } = args;
  console.log(`seed ${run.seed}; replay with --seed ${run.seed}`);
  const stamp = () => new Date().toISOString().slice(11, 19);
  const report = await runChaos({ ...run, log: (line) => console.log(`[${stamp()}] ${line}`) });
  console.log(formatReport(report));
  if (args.json) {
    console.log(
      JSON.stringify({
        options: report.options,
        injected: report.injected,
        stats: report.check.stats,
        violations: report.check.violations,
        excusedFenceRegressions: report.check.excusedFenceRegressions,
        rounds: report.rounds,
        failures: report.failures,
        elapsedMs: Math.round(report.elapsedMs),
      }),
    );
  }
  return report.check.violations.length > 0 || report.crashes.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
