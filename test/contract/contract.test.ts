/**
 * The adapter contract (`cases.ts`) in Node against a real 3-node dev cluster: Hono `lock()`,
 * `limit()` and `idempotency()` on Node (`app.request`, no execution context), the Lambda wrappers
 * (`withLock`, `withLimit`, `withIdempotency`, `dedupeScheduled`) with a Lambda-shaped context, and
 * `once()`. The same table runs inside workerd in `test/workers/contract.test.ts`.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { useDevCluster } from "../support/dev-cluster";
import { CASES, KINDS, type Kind, runContract } from "./cases";
import { ContractCluster } from "./harness";
import { honoLimit, lambdaWithLimit } from "./limit-surfaces";
import {
  honoIdempotency,
  honoLock,
  lambdaDedupe,
  lambdaWithIdempotency,
  lambdaWithLock,
  onceSurface,
  type Runtime,
} from "./surfaces";

const dev = useDevCluster({ nodes: 3 });
let cluster: ContractCluster | undefined;
const clusterOf = () => (cluster ??= new ContractCluster(dev.cluster.nodes));

const node: Runtime = {
  name: "node",
  async honoCall(app, request) {
    const res = await app.request(request);
    await res.arrayBuffer();
    return res;
  },
  async scheduled(handler, cron, scheduledTime) {
    const pending: Promise<unknown>[] = [];
    const controller = { cron, scheduledTime, noRetry: () => undefined };
    const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p) };
    try {
      await handler(controller as never, {} as never, ctx as never);
    } finally {
      await Promise.allSettled(pending);
    }
  },
};

runContract(
  [
    honoLock(node),
    honoLimit(node),
    honoIdempotency(node),
    lambdaWithLock(),
    lambdaWithLimit(),
    lambdaWithIdempotency(),
    lambdaDedupe(),
    onceSurface(node),
  ],
  clusterOf,
);

describe("the contract table", () => {
  it("every case that does not apply to a surface says why", () => {
    for (const c of CASES) {
      for (const [kind, why] of Object.entries(c.notFor)) {
        expect(why, `${c.id} for ${kind}`).toMatch(/\w{3,}/);
      }
    }
  });

  it("every case applies to some surface, and every surface makes some promise", () => {
    const kinds: readonly Kind[] = KINDS;
    for (const c of CASES) expect(kinds.some((k) => c.notFor[k] === undefined)).toBe(true);
    for (const k of kinds) expect(CASES.some((c) => c.notFor[k] === undefined)).toBe(true);
  });

  it("docs/SAFETY.md §6e marks ✓ exactly where a case runs on a surface", () => {
    const doc = readFileSync("docs/SAFETY.md", "utf8");
    const section = doc.slice(doc.indexOf("## 6e."), doc.indexOf("## 7."));
    const cells = (line: string) =>
      line
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim());
    const lines = section.split("\n").filter((l) => l.startsWith("|"));
    const header = lines.find((l) => l.startsWith("| surface |"));
    if (header === undefined) throw new Error("no surface grid in §6e");
    const columns = cells(header)
      .slice(1)
      .map((c) => c.split(", "));
    const rows: Record<string, Kind> = {
      "Hono `lock()`": "hono lock()",
      "Hono `limit()`": "hono limit()",
      "Hono `idempotency()`": "hono idempotency()",
      "Lambda `withLock`": "lambda withLock",
      "Lambda `withLimit`": "lambda withLimit",
      "Lambda `withIdempotency`": "lambda withIdempotency",
      "Lambda `dedupeScheduled`": "lambda dedupeScheduled",
      "Workers `dedupeScheduled`": "workers dedupeScheduled",
      "`once()`": "once()",
    };
    let seen = 0;
    for (const line of lines) {
      const [label = "", ...marks] = cells(line);
      const kind = Object.entries(rows).find(([name]) => label.startsWith(name))?.[1];
      if (kind === undefined) continue;
      seen += 1;
      marks.forEach((mark, i) => {
        for (const id of columns[i] ?? []) {
          const c = CASES.find((x) => x.id === id);
          expect(c, `case ${id}`).toBeDefined();
          expect(mark.startsWith("✓"), `${id} on ${kind}`).toBe(c?.notFor[kind] === undefined);
        }
      });
    }
    expect(seen).toBe(Object.keys(rows).length);
    expect(columns.flat().sort()).toEqual(CASES.map((c) => c.id).sort());
  });
});
