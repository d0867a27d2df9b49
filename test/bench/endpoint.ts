// Latency the dev REST endpoint adds: one command through the endpoint with plain fetch
// (keep-alive; Node's global fetch reuses connections) vs the same command sent directly with
// ioredis to the same redis-server, interleaved in one run after a warm-up. A third path, fetch to
// a bare node:http server answering a constant (no Redis), measures the floor that fetch + HTTP
// cost on this machine whatever the endpoint does, so the endpoint's own share can be told apart.
//
//   npx tsx test/bench/endpoint.ts [--iterations 3000] [--warmup 500] [--command set|get]
//
// Target: the endpoint adds <= 0.5 ms at the median.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { startDevCluster } from "../../src/dev/index";

const { values } = parseArgs({
  options: {
    iterations: { type: "string", default: "3000" },
    warmup: { type: "string", default: "500" },
    command: { type: "string", default: "set" },
  },
});
const iterations = Number(values.iterations);
const warmup = Number(values.warmup);
const command = values.command === "get" ? ["GET", "bench:k"] : ["SET", "bench:k", "v"];
const TIME_BUDGET_MS = 15_000;
const TARGET_ADDED_MS = 0.5;

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** A do-nothing HTTP server: reads the body, answers the same JSON shape. */
async function startBareServer(): Promise<{ url: string; close: () => void }> {
  const reply = '{"result":"T0s="}';
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, ["content-type", "application/json", "content-length", `${reply.length}`]);
      res.end(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const cluster = await startDevCluster({ nodes: 1, backend: "redis" });
const bare = await startBareServer();
const node = cluster.controls[0];
if (node === undefined) throw new Error("no node");
const endpointUrl = node.url;
const direct = new Redis(node.redisUrl);
const init: RequestInit = {
  method: "POST",
  headers: {
    authorization: `Bearer ${node.token}`,
    "content-type": "application/json",
    "upstash-encoding": "base64",
  },
  body: JSON.stringify(command),
};

async function viaFetch(url: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  const reply = (await res.json()) as { result?: unknown };
  const elapsed = performance.now() - t0;
  if (res.status !== 200 || reply.result === undefined) throw new Error(`bad reply ${res.status}`);
  return elapsed;
}

async function viaIoredis(): Promise<number> {
  const t0 = performance.now();
  await direct.call(command[0] as string, ...command.slice(1));
  return performance.now() - t0;
}

const paths = [
  { name: "fetch → dev endpoint → redis-server", run: () => viaFetch(endpointUrl), xs: [0] },
  { name: "ioredis → redis-server", run: viaIoredis, xs: [0] },
  { name: "fetch → bare node:http, no Redis (floor)", run: () => viaFetch(bare.url), xs: [0] },
];

try {
  await direct.set("bench:k", "v");
  for (let i = 0; i < warmup; i++) for (const path of paths) await path.run();
  for (const path of paths) path.xs = [];
  const started = performance.now();
  for (let i = 0; i < iterations && performance.now() - started < TIME_BUDGET_MS; i++) {
    // Rotate the order so no path always runs right after the same other one.
    for (let j = 0; j < paths.length; j++) {
      const path = paths[(i + j) % paths.length];
      path?.xs.push(await path.run());
    }
  }
  const [endpoint, redis, floor] = paths.map((path) => path.xs.sort((a, b) => a - b)) as [
    number[],
    number[],
    number[],
  ];
  const median = (xs: number[]) => quantile(xs, 0.5);
  console.log(`\n${command.join(" ")} — Node ${process.version}, ${endpoint.length} rounds\n`);
  console.log("| path | median ms | p99 ms |");
  console.log("|---|---|---|");
  for (const path of paths) {
    console.log(
      `| ${path.name} | ${median(path.xs).toFixed(3)} | ${quantile(path.xs, 0.99).toFixed(3)} |`,
    );
  }
  const added = median(endpoint) - median(redis);
  const own = median(endpoint) - median(floor) - median(redis);
  console.log(
    `\nratio (median, endpoint / ioredis): ${(median(endpoint) / median(redis)).toFixed(2)}×` +
      `\nadded at the median: ${added.toFixed(3)} ms ` +
      `(target <= ${TARGET_ADDED_MS} ms: ${added <= TARGET_ADDED_MS ? "met" : "missed"})` +
      `\n  of which fetch + HTTP floor: ${median(floor).toFixed(3)} ms` +
      `\n  of which the endpoint itself (endpoint − floor − ioredis): ${own.toFixed(3)} ms`,
  );
} finally {
  direct.disconnect();
  bare.close();
  await cluster.stop();
}
