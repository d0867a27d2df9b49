/**
 * `npm start`: the example Worker inside workerd against a local 3-node dev cluster — bursts of
 * concurrent charges with all nodes up, one paused and two paused, then duplicate Cron Trigger
 * deliveries (see scripts/demo/run.ts, which test/demo/demo.test.ts asserts row by row). Exits 1
 * if the cron job ran other than exactly once.
 *
 * The nodes are redis-servers when redis-server is on PATH and ioredis is installed, else in-memory
 * nodes (the output says which); `npm start -- --memory` or `-- --redis` chooses.
 *
 * Run: npm start   (about 12 s; no network beyond 127.0.0.1)
 */
import { runDemo } from "./demo/run";

const flags = process.argv.slice(2);
const backend = flags.includes("--memory")
  ? "memory"
  : flags.includes("--redis")
    ? "redis"
    : "auto";

runDemo({ backend }).then(
  ({ cron }) => {
    if (cron.ran !== 1 || cron.failed !== 0) {
      console.error(`edgelock demo: the cron job ran ${cron.ran} times, ${cron.failed} failed`);
      process.exit(1);
    }
    process.exit(0);
  },
  (error: unknown) => {
    console.error("edgelock demo failed:", error);
    process.exit(1);
  },
);
