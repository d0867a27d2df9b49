// Child process of the lock bench: runs one dev cluster (startDevCluster) so that its REST
// endpoints do not share the bench's event loop (in production the endpoints are other machines;
// in-process, every request's server-side work would be billed to the client's latency).
// Started by cluster.ts with `fork` (tsx's loader flags are inherited through execArgv); talks
// over the IPC channel: one "ready" message with the node settings, then one reply per request.
// Exits, stopping the cluster, on a "stop" request or when the parent goes away.
import { type DevCluster, type Fault, startDevCluster } from "../../src/dev/index";

/** A request from the parent; `id` pairs it with its reply. */
export type HostRequest = { readonly id: number } & (
  | { readonly op: "inject"; readonly index: number; readonly fault: Fault }
  | {
      readonly op: "clearFaults" | "pause" | "resume" | "stats" | "resetStats";
      readonly index: number;
    }
  | { readonly op: "stop" }
);

export type HostMessage =
  | {
      readonly type: "ready";
      readonly nodes: readonly { url: string; token: string; redisUrl: string }[];
    }
  | {
      readonly type: "reply";
      readonly id: number;
      readonly result?: unknown;
      readonly error?: string;
    };

const send = (message: HostMessage) => process.send?.(message);

function handle(cluster: DevCluster, request: HostRequest): unknown {
  if (request.op === "stop") return undefined;
  const control = cluster.controls[request.index];
  if (control === undefined) throw new Error(`no node ${request.index}`);
  switch (request.op) {
    case "inject":
      return control.inject(request.fault);
    case "clearFaults":
      return control.clearFaults();
    case "pause":
      return control.pause();
    case "resume":
      return control.resume();
    case "stats":
      return control.stats();
    case "resetStats":
      return control.resetStats();
  }
}

const nodes = Number(process.argv[2] ?? "5");
const cluster = await startDevCluster({ nodes, backend: "redis" });
const stop = async () => {
  await cluster.stop();
  process.exit(0);
};
process.on("disconnect", () => void stop());
process.on("message", (request: HostRequest) => {
  if (request.op === "stop") {
    send({ type: "reply", id: request.id });
    void stop();
    return;
  }
  try {
    send({ type: "reply", id: request.id, result: handle(cluster, request) });
  } catch (error) {
    send({ type: "reply", id: request.id, error: String(error) });
  }
});
send({
  type: "ready",
  nodes: cluster.controls.map((c) => ({ url: c.url, token: c.token, redisUrl: c.redisUrl })),
});
