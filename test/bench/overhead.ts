// CPU per uncontended acquire + release, the library alone: nodes that answer in-process at once
// (no network, no endpoint), so what is measured is edgelock's own work per lock — the rounds, the
// handle, the release — which every Worker and Lambda pays in CPU on top of its requests.
//
//   npx tsx test/bench/overhead.ts [--nodes 1] [--rounds 30000]
//
// Prints µs of CPU (user + system) and of wall time per round. Compare two commits by running
// this file in a worktree of each (copy it into an older one), alternating, on a quiet machine.
import { parseArgs } from "node:util";
import { createLocks } from "../../src/index";
import { SCRIPTS } from "../../src/scripts";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "1" },
    rounds: { type: "string", default: "30000" },
  },
});
const nodes = Number(values.nodes);
const rounds = Number(values.rounds);

const NAMES = new Map<string, string>(
  SCRIPTS.flatMap((s) => [
    [s.sha1, s.name],
    [s.lua, s.name],
  ]),
);
let fence = 0;

/** A node that grants every acquire and confirms every release, at once. */
function instantNode() {
  const reply = (name: string | undefined): unknown => {
    if (name === "acquire") return [1, ++fence];
    if (name === "release") return 1;
    if (name === "fence-raise") return [1, fence];
    throw new Error(`unexpected script ${name}`);
  };
  return {
    eval: async (script: string) => reply(NAMES.get(script)),
    evalsha: async (sha1: string) => reply(NAMES.get(sha1)),
  };
}

const locks = createLocks({ nodes: Array.from({ length: nodes }, instantNode), lease: 10_000 });

async function run(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const lock = await locks.acquire("bench:overhead");
    const { status } = await lock.release();
    if (status !== "released") throw new Error(`release: ${status}`);
  }
}

async function main(): Promise<void> {
  await run(Math.min(3_000, rounds));
  const start = performance.now();
  const cpu = process.cpuUsage();
  await run(rounds);
  const used = process.cpuUsage(cpu);
  const wallUs = ((performance.now() - start) * 1000) / rounds;
  const cpuUs = (used.user + used.system) / rounds;
  console.log(
    `${nodes} node(s), ${rounds} rounds: ${cpuUs.toFixed(1)} µs CPU, ${wallUs.toFixed(1)} µs wall per acquire + release`,
  );
}

void main();
