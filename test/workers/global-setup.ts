/**
 * Global setup of the "workers" vitest project. Runs in Node, before workerd starts: one 3-node dev
 * cluster for every workers test file, handed to the Worker as the `EDGELOCK_NODES` binding
 * (vitest.config.ts). Tests inside workerd drive faults and read request counts through each
 * node's admin routes (`/__edgelock/*`, protected by that node's token).
 */
import { tsImport } from "tsx/esm/api";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    devNodes: { url: string; token: string }[];
  }
}

type DevModule = typeof import("../../src/dev");

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // src/dev is loaded by Node through tsx, not by vite: this project's module runner resolves for
  // workerd, where the CommonJS named exports of ioredis (used by src/dev) come out undefined.
  const dev: DevModule = await tsImport("../../src/dev/index.ts", import.meta.url);
  const cluster = await dev.startDevCluster({ nodes: 3, backend: "redis" });
  project.provide(
    "devNodes",
    cluster.nodes.map(({ url, token }) => ({ url, token })),
  );
  return () => cluster.stop();
}
