/**
 * Long simulation campaigns: `npm run sim -- --schedules N [--seed S] [--mutant NAME]`.
 *
 * Runs N random schedules of the deterministic simulation (test/sim: the library's real code
 * against simulated nodes running the real Lua, in virtual time, with seeded faults) and prints
 * schedules/s, operations and violations. On a bug it prints the failing schedule at once, then the shrunk one and the command
 * that replays it (`--seed S --path P`), and exits 1. `--mutant` runs the nodes (or the client
 * realms) with one fix undone (see test/sim/mutants.ts), to show the campaign finds the defect.
 * `--semaphores` puts the semaphore workload in every schedule (else one in eight), `--crowded`
 * its crowded form (every call waiting, short holds, P at most 2, each caller twice, no freeze),
 * and `--fault-free` makes every schedule calm with no restarts, where liveness and order are
 * judged (test/sim/workload/spec.ts `ScheduleFocus`).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { formatCampaign, formatFailure, runCampaign } from "../test/sim/campaign";
import { type AnyMutantName, MUTANT_NAMES, mutantRun } from "../test/sim/mutants";

const USAGE = `usage: npm run sim -- --schedules N [--seed S] [--path P] [--semaphores] [--crowded] [--fault-free] [--mutant ${MUTANT_NAMES.join("|")}]`;

async function main(): Promise<number> {
  let values: ReturnType<typeof parse>;
  try {
    values = parse();
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  const schedules = Number(values.schedules ?? "1000");
  const seed = Number(values.seed ?? String(Date.now() % 2 ** 31));
  const mutant = values.mutant as AnyMutantName | undefined;
  if (!Number.isSafeInteger(schedules) || schedules < 1 || !Number.isSafeInteger(seed)) {
    console.error(`--schedules and --seed take integers\n${USAGE}`);
    return 2;
  }
  if (mutant !== undefined && !MUTANT_NAMES.includes(mutant)) {
    console.error(`unknown mutant "${mutant}"\n${USAGE}`);
    return 2;
  }
  console.log(
    `edgelock simulation: ${schedules} schedules from seed ${seed}${mutant ? ` (mutant ${mutant})` : ""}${values.semaphores || values.crowded ? `, ${values.crowded ? "crowded " : ""}semaphores in every one` : ""}${values["fault-free"] ? ", all fault-free" : ""}`,
  );
  const step = Math.max(1, Math.floor(schedules / 10));
  const report = await runCampaign({
    schedules,
    seed,
    path: values.path,
    ...(mutant === undefined ? {} : mutantRun(mutant)),
    focus: {
      semaphores: values.semaphores,
      crowded: values.crowded,
      faultFree: values["fault-free"],
    },
    replaySuffix: [
      values.semaphores === true ? " --semaphores" : "",
      values.crowded === true ? " --crowded" : "",
      values["fault-free"] === true ? " --fault-free" : "",
      mutant === undefined ? "" : ` --mutant ${mutant}`,
    ].join(""),
    onFirstFailure: (spec, result) => {
      const bugs = result.verdict.bugs.map((b) => `  - ${b.property}: ${b.detail}`);
      console.log(
        ["found (shrinking now):", ...bugs, `unshrunk spec: ${JSON.stringify(spec)}`].join("\n"),
      );
    },
    onSchedule: (done, so) => {
      // Shrinking runs schedules past N: those are not progress.
      if (done <= schedules && done % step === 0)
        console.log(`  ${done} schedules, ${so.seconds.toFixed(1)} s`);
    },
  });
  console.log(formatCampaign(report));
  if (report.failure !== undefined) console.log(formatFailure(report.failure));
  return report.failure === undefined ? 0 : 1;
}

function parse() {
  return parseArgs({
    options: {
      schedules: { type: "string" },
      seed: { type: "string" },
      path: { type: "string" },
      mutant: { type: "string" },
      // Every schedule with the semaphore workload; every schedule calm with no restarts.
      semaphores: { type: "boolean" },
      crowded: { type: "boolean" },
      "fault-free": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  }).values;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
