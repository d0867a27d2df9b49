/**
 * The names a semaphore uses (docs/design/semaphore.md §2 "Slots") are reserved for lock keys, and for
 * semaphore names alike (both go through `checkKey`): a key ending in `:permits` (the stem of a
 * semaphore's room and tombstones) or in `:permit:<digits>` (a slot) is refused with a
 * ConfigurationError naming the option, before any node is called; every other key is as before.
 * So no lock ever shares a key with a semaphore: every key a semaphore's scripts write is a name
 * `checkKey` refuses (its slots and room) or carries a fresh token (its tombstones).
 */
import { describe, expect, it } from "vitest";
import { ConfigurationError, createLocks } from "../../src/index";
import { checkKey, checkKeys } from "../../src/lock/keyset";
import { semaphoreKeys } from "../../src/scripts";
import { memoryNodes } from "../../src/testing";

const optionOf = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigurationError) return error.option;
    throw error;
  }
  return undefined;
};

describe("the semaphore's reserved names", () => {
  it.each(["llm:permits", "llm:permit:0", "a:b:permit:63", "x:permit:007"])(
    "%j is refused as a lock key, with fencing on or off, alone or in a set",
    (key) => {
      expect(optionOf(() => checkKey(key, false))).toBe("key");
      expect(optionOf(() => checkKey(key, true))).toBe("key");
      expect(optionOf(() => checkKeys(["ok", key], false))).toBe("key[1]");
      expect(optionOf(() => checkKey(key, false, "ticket.key"))).toBe("ticket.key");
    },
  );

  it("other keys are as before: near misses are accepted", () => {
    for (const key of [
      "permits",
      "permit:3",
      "x:permit",
      "x:permit:",
      "x:permit:-1",
      "x:permit:1a",
      "x:permit:1:x",
      "x:permits:1",
      "x:permitss",
      "x:Permits",
    ]) {
      expect(checkKey(key, false), key).toBe(key);
    }
  });

  it("every slot and room of a semaphore is a name checkKey refuses", () => {
    const keys = semaphoreKeys("", "llm", 5);
    for (const { lock, room } of keys.slots) {
      expect(
        optionOf(() => checkKey(lock, false)),
        lock,
      ).toBe("key");
      expect(
        optionOf(() => checkKey(room, false)),
        room,
      ).toBe("key");
    }
    expect(keys.tombstone("ab12")).toBe("llm:permits:void:ab12");
    expect(keys.slots.map((s) => s.fence)).toContain("llm:permit:4:fence");
  });

  it("acquire refuses a reserved key before calling any node", async () => {
    const locks = createLocks({ nodes: memoryNodes(3) });
    await expect(locks.acquire("jobs:permits")).rejects.toMatchObject({ option: "key" });
    await expect(locks.acquire(["a", "jobs:permit:1"])).rejects.toMatchObject({
      option: "key[1]",
    });
    await expect(locks.acquire("jobs:permit:1")).rejects.toThrow(/`key`: reserved/);
  });
});
