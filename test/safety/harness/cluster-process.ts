/**
 * A dev cluster in its own process, for the load test: the endpoints' own timers, sockets and
 * memory then stay out of the measurements taken in the test process. Forked with an IPC channel:
 * it sends `{ nodes, redisUrls }` once the cluster is up, and stops it on `"stop"` or when the
 * parent goes away.
 *
 * @module
 */

import { startDevCluster } from "../../../src/dev/index";

const cluster = await startDevCluster({ nodes: Number(process.argv[2] ?? 5), backend: "redis" });
const stop = async () => {
  await cluster.stop();
  process.exit(0);
};
process.on("message", (message) => {
  if (message === "stop") void stop();
});
process.on("disconnect", () => void stop());
process.send?.({ nodes: cluster.nodes, redisUrls: cluster.controls.map((c) => c.redisUrl) });
