/**
 * A queue record keeps its newest look (docs/SAFETY.md §2 P3, `QUEUE`'s `register`): a late
 * registration of an older look of the same call leaves the newer look's `look` and `p`, so a
 * hand-off names the newest look registered — one a call that passed in between still counts.
 * The rule is one of liveness, not safety (SAFETY.md P3: a record's look and `p` are written by
 * one registration, so any record's pair is a sound bound), which is why no schedule can find its
 * mutant `q2-register-older-look`: here the exact script sequence shows what the mutant changes.
 */
import { describe, expect, it } from "vitest";
import { SimNode } from "../../../src/memory";
import { ACQUIRE, PASS, RELEASE } from "../../../src/scripts";
import { MUTANTS } from "../mutants";
import { sha1 } from "./sha1";

const H = "0123456789abcdef0123456789abcdef"; // the holder
const T = "fedcba9876543210fedcba9876543210"; // the waiting call's one token
const CALL = ["k", "k:fence", "k:wait", `k:void:${T}`];
const PLACE = "1000";
/** A registration's listener, wait, hand-off TTL, room TTL and fencing (ARGV after the look). */
const REG = ["abc", "60000", "1500", "60000", "0"];

/**
 * The call passes (look 2) while H holds the key; a request of its look 1 runs after the pass;
 * H releases: the hand-off's message, `token|look|gap|handMs|fence`.
 */
function handoffAfterLatePass(lua: { acquire: string; pass: string }): string[] {
  let now = 5_000;
  const heard: string[] = [];
  const node = new SimNode({
    now: () => now,
    sha1,
    onPublish: (_channel, message) => {
      heard.push(message);
      return 1;
    },
  });
  node.set("k", H, 9_000);
  expect(node.eval(lua.pass, CALL, [T, PLACE, "2", ...REG])).toEqual({
    ok: true,
    value: [0, 9000],
  });
  now = 5_100;
  const late = node.eval(lua.acquire, CALL, [T, "1500", "0", PLACE, "1", ...REG]);
  expect(late).toEqual({ ok: true, value: [0, 8900, -1] });
  now = 5_300;
  expect(node.eval(RELEASE.lua, ["k", "k:fence", "k:wait"], [H])).toEqual({ ok: true, value: 1 });
  expect(node.get("k")).toBe(T);
  return heard;
}

describe("a late registration of an older look", () => {
  it("leaves the newer look's record: the hand-off names the pass's look, gap from its p", () => {
    const heard = handoffAfterLatePass({ acquire: ACQUIRE.lua, pass: PASS.lua });
    expect(heard).toEqual([`${T}|2|300|1500|0`]);
  });

  it("the mutant names the older look (a call that passed at 2 ignores it until its refresh)", () => {
    const mutant = MUTANTS["q2-register-older-look"];
    const acquire = mutant.get(ACQUIRE.sha1) as string;
    const pass = mutant.get(PASS.sha1) as string;
    // Still a sound bound: look 1's own registration, 200 ms before the hand-off.
    expect(handoffAfterLatePass({ acquire, pass })).toEqual([`${T}|1|200|1500|0`]);
  });
});
