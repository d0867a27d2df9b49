/**
 * The bench's view of the dev cluster: node settings plus asynchronous controls, either in one
 * child process per node (default: cluster-host.ts each, so endpoint work neither runs on the
 * bench's event loop nor queues behind the other nodes' on one event loop, as with separate
 * servers), in one child process for all nodes (`--cluster child`), or in this process
 * (`--cluster in-process`, `startDevCluster` directly).
 *
 * @module
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  type DevNodeConfig,
  type Fault,
  type NodeStats,
  startDevCluster,
} from "../../src/dev/index";
import type { HostMessage, HostRequest } from "./cluster-host";

/** The controls of one node the bench uses (DevNode's, made asynchronous). */
export interface BenchNode {
  readonly index: number;
  readonly url: string;
  readonly token: string;
  readonly redisUrl: string;
  inject(fault: Fault): Promise<void>;
  clearFaults(): Promise<void>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  stats(): Promise<NodeStats>;
  resetStats(): Promise<void>;
}

export interface BenchCluster {
  readonly where: "child process per node" | "child process" | "in process";
  readonly nodes: readonly DevNodeConfig[];
  readonly controls: readonly BenchNode[];
  stop(): Promise<void>;
}

type Call = (request: DistributiveOmit<HostRequest, "id">) => Promise<unknown>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function remoteNode(call: Call, index: number, settings: HostNodeSettings): BenchNode {
  return {
    index,
    ...settings,
    inject: async (fault) => void (await call({ op: "inject", index, fault })),
    clearFaults: async () => void (await call({ op: "clearFaults", index })),
    pause: async () => void (await call({ op: "pause", index })),
    resume: async () => void (await call({ op: "resume", index })),
    stats: async () => (await call({ op: "stats", index })) as NodeStats,
    resetStats: async () => void (await call({ op: "resetStats", index })),
  };
}

type HostNodeSettings = { url: string; token: string; redisUrl: string };

async function startChild(nodes: number): Promise<BenchCluster> {
  const child: ChildProcess = fork(
    fileURLToPath(new URL("./cluster-host.ts", import.meta.url)),
    [String(nodes)],
    { stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  const ready = new Promise<readonly HostNodeSettings[]>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`cluster host exited (${code})`)));
    child.on("message", (message: HostMessage) => {
      if (message.type === "ready") {
        resolve(message.nodes);
        return;
      }
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.error === undefined) waiter?.resolve(message.result);
      else waiter?.reject(new Error(message.error));
    });
  });
  const call: Call = (request) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ ...request, id });
    });
  const settings = await ready;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    where: "child process",
    nodes: settings.map(({ url, token }) => ({ url, token })),
    controls: settings.map((s, index) => remoteNode(call, index, s)),
    async stop() {
      if (child.exitCode !== null) return;
      await call({ op: "stop" }).catch(() => {});
      await exited;
    },
  };
}

async function startChildPerNode(nodes: number): Promise<BenchCluster> {
  const started = await Promise.allSettled(Array.from({ length: nodes }, () => startChild(1)));
  const parts = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const stop = async () => {
    await Promise.all(parts.map((p) => p.stop()));
  };
  const failed = started.find((s) => s.status === "rejected");
  if (failed !== undefined) {
    await stop();
    throw failed.reason;
  }
  return {
    where: "child process per node",
    nodes: parts.flatMap((p) => p.nodes),
    controls: parts.flatMap((p, index) => p.controls.map((c) => ({ ...c, index }))),
    stop,
  };
}

async function startInProcess(nodes: number): Promise<BenchCluster> {
  const cluster = await startDevCluster({ nodes, backend: "redis" });
  return {
    where: "in process",
    nodes: cluster.nodes,
    controls: cluster.controls.map((c) => ({
      index: c.index,
      url: c.url,
      token: c.token,
      redisUrl: c.redisUrl,
      inject: async (fault) => c.inject(fault),
      clearFaults: async () => c.clearFaults(),
      pause: async () => c.pause(),
      resume: async () => c.resume(),
      stats: async () => c.stats(),
      resetStats: async () => c.resetStats(),
    })),
    stop: () => cluster.stop(),
  };
}

/**
 * Start a dev cluster of `nodes` nodes for the bench.
 *
 * @example
 * const cluster = await startBenchCluster(5, "child process per node");
 * await cluster.controls[4].inject({ kind: "latency", ms: 200 });
 * await cluster.stop();
 */
export function startBenchCluster(
  nodes: number,
  where: BenchCluster["where"],
): Promise<BenchCluster> {
  if (where === "child process per node") return startChildPerNode(nodes);
  return where === "child process" ? startChild(nodes) : startInProcess(nodes);
}
