/**
 * `wrangler dev` for the example Worker against a local dev cluster, offline.
 *
 * Starts a 3-node dev cluster (redis-servers, or in memory without redis-server), writes its nodes to a temporary env file (mode 0600, outside the
 * repository, deleted on exit) and runs `wrangler dev --env-file <it>`: wrangler then reads the
 * nodes from there instead of `.dev.vars`, so nothing secret is written to the repository and no
 * token shows up in the process list. Ctrl-C stops wrangler, the cluster and removes the file.
 *
 * Extra arguments go to `wrangler dev` (e.g. `--port 8788`).
 *
 * Run: npx tsx scripts/dev.ts
 *   curl -X POST http://127.0.0.1:8787/invoices/42/charge
 *   curl "http://127.0.0.1:8787/cdn-cgi/handler/scheduled?cron=0+3+*+*+*"
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startDevCluster } from "../src/dev";
import { backendLine } from "../src/dev/cli/dev";

const cluster = await startDevCluster({ nodes: 3 });
const dir = mkdtempSync(join(tmpdir(), "edgelock-wrangler-"));
const envFile = join(dir, "worker.env");
// dotenv single quotes keep the JSON's double quotes literal.
writeFileSync(envFile, `EDGELOCK_NODES='${JSON.stringify(cluster.nodes)}'\n`, { mode: 0o600 });

let cleaned = false;
async function cleanup(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  rmSync(dir, { recursive: true, force: true });
  await cluster.stop();
}

console.log(
  `edgelock dev cluster ${backendLine(cluster)}: ${cluster.controls.map((c) => c.url).join(", ")}`,
);
console.log("starting wrangler dev with EDGELOCK_NODES pointing at it…\n");

const require = createRequire(import.meta.url);
const wrangler = join(dirname(require.resolve("wrangler/package.json")), "bin", "wrangler.js");
const child = spawn(
  process.execPath,
  [wrangler, "dev", "--ip", "127.0.0.1", "--env-file", envFile, ...process.argv.slice(2)],
  {
    stdio: "inherit",
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
  },
);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => {
  void cleanup().then(() => process.exit(code ?? (signal === null ? 0 : 1)));
});
child.on("error", (error) => {
  console.error("could not start wrangler:", error);
  void cleanup().then(() => process.exit(1));
});
