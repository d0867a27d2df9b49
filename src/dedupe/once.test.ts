import { describe, expect, it, vi } from "vitest";
import { isConfigurationError } from "../errors";
import type { Locks } from "../lock";
import { createLocks } from "../lock";
import { once } from "./once";
import { checkRetention, DEFAULT_RETENTION } from "./options";

// Never contacted: every case below fails validation before any node request.
const locks = createLocks({ nodes: [{ url: "http://127.0.0.1:9", token: "unused" }] });

async function optionOf(run: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await run();
  } catch (error) {
    if (isConfigurationError(error)) return error.option;
    throw error;
  }
  return undefined;
}

describe("once() options", () => {
  it.each([
    ["retention", { retention: 0 }],
    ["retention", { retention: -1 }],
    ["retention", { retention: 1.5 }],
    ["retention", { retention: Number.NaN }],
    ["retention", { retention: "1000" }],
    ["lease", { lease: 0 }],
    ["lease", { lease: 2.5 }],
    ["wait", { wait: 1_000 }],
    ["options", null],
  ])("rejects a bad `%s` before calling any node", async (option, options) => {
    const job = vi.fn();
    expect(await optionOf(() => once(locks, "k", job, options as never))).toBe(option);
    expect(job).not.toHaveBeenCalled();
  });

  it("rejects a bad key, job or manager", async () => {
    expect(await optionOf(() => once(locks, "", () => 1))).toBe("key");
    expect(await optionOf(() => once(locks, "k", "job" as never))).toBe("fn");
    expect(await optionOf(() => once({} as Locks, "k", () => 1))).toBe("locks");
  });

  it("a manager whose locks cannot be completed is refused before the job runs", async () => {
    const release = vi.fn(async () => ({ status: "released" as const, outcomes: [] }));
    const foreign = { ...locks, acquire: async () => ({ release }) } as unknown as Locks;
    const job = vi.fn();
    expect(await optionOf(() => once(foreign, "k", job))).toBe("locks");
    expect(job).not.toHaveBeenCalled();
    expect(release).toHaveBeenCalledOnce();
  });

  it("retention defaults to 24 h", () => {
    expect(DEFAULT_RETENTION).toBe(86_400_000);
    expect(checkRetention(undefined)).toBe(86_400_000);
    expect(checkRetention(1)).toBe(1);
  });
});
