/**
 * The undo of a failed resume when the fresh token has no time left (docs/SAFETY.md §2 "DISCARD"):
 * on the simulated node, whose clock can stop exactly at a key's expiry (PTTL 0 inside the
 * script), DISCARD must not put the ticket's token back without an expiry — it deletes the key.
 * The mutant with the old `SET key t0` (no PX) shows the check catches it. The real-server
 * counterpart is `test/lock/resume-undo.test.ts`.
 */
import { describe, expect, it } from "vitest";
import { SimNode } from "../../../src/memory";
import { DISCARD } from "../../../src/scripts";
import { MUTANTS } from "../mutants";

const T = "0123456789abcdef0123456789abcdef";
const KEYS = ["k", "k:fence", "k:wait", `k:void:${T}`];

function undoAtExpiry(lua: string): { pttl: number; value: string | null; reply: unknown } {
  let now = 1_000;
  const node = new SimNode({ now: () => now });
  node.set("k", T, 100);
  now = 1_100; // the fresh token's last millisecond: PTTL 0
  expect(node.pttl("k")).toBe(0);
  const reply = node.eval(lua, KEYS, [T, "5000", "t0"]);
  return { pttl: node.pttl("k"), value: node.get("k"), reply };
}

describe("DISCARD putting the ticket's token back at PTTL 0", () => {
  it("deletes the key rather than writing it without an expiry", () => {
    const { pttl, value, reply } = undoAtExpiry(DISCARD.lua);
    expect(reply).toEqual({ ok: true, value: 1 });
    expect(value).toBeNull();
    expect(pttl).toBe(-2);
  });

  it("the mutant (SET without PX) leaves the key for ever", () => {
    const lua = MUTANTS["l22-undo-without-expiry"].get(DISCARD.sha1) as string;
    const { pttl, value } = undoAtExpiry(lua);
    expect(value).toBe("t0");
    expect(pttl).toBe(-1);
  });
});
