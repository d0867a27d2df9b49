import { describe, expect, it } from "vitest";
import { HANDOVER_RUN_MAX, type LineSpot, LocalLines, type Offer } from "./queue";

const FAR = () => performance.now() + 60_000;

describe("LocalLine", () => {
  it("first come, first served; a held grant blocks the turn until it ends", () => {
    const lines = new LocalLines();
    const line = lines.of("k");
    const hold = line.hold(FAR());
    const a = line.join(1_000);
    const b = line.join(1_000);
    expect(line.idle).toBe(false);
    expect([line.isFirst(a), line.isTurn(a), line.isTurn(b)]).toEqual([true, false, false]);
    hold.end();
    hold.end(); // idempotent
    expect(line.held()).toBe(0);
    expect([line.isTurn(a), line.isTurn(b)]).toEqual([true, false]);
    line.leave(a);
    expect(line.isTurn(b)).toBe(true);
    line.leave(b);
    expect(line.idle).toBe(true);
  });

  it("waiters stand in wait room order, whatever order they joined in; ties and no place: joining order", () => {
    const line = new LocalLines().of("k");
    const hold = line.hold(FAR());
    const late = line.join(1_000, 1_002);
    const tie = line.join(1_000, 1_002);
    const early = line.join(1_000, 1_000); // its first look answered last
    const none = line.join(1_000);
    expect(line.firstPlace()).toBe(1_000);
    expect(line.isFirst(early)).toBe(true);
    line.leave(early);
    expect([line.isFirst(late), line.firstPlace()]).toEqual([true, 1_002]);
    line.leave(late);
    expect(line.isFirst(tie)).toBe(true);
    line.leave(tie);
    expect(line.isFirst(none)).toBe(true);
    line.leave(none);
    hold.end();
    expect(line.idle).toBe(true);
  });

  it("changed() wakes only the first waiter: when a grant ends or the one before it leaves", async () => {
    const line = new LocalLines().of("k");
    const hold = line.hold(FAR());
    const a = line.join(1_000);
    const b = line.join(1_000);
    const c = line.join(1_000);
    const woken: string[] = [];
    const watch = (name: string, spot: LineSpot) =>
      void line.changed(spot).then(() => woken.push(name));
    const tick = async () => {
      for (let i = 0; i < 3; i++) await Promise.resolve();
    };
    watch("a", a);
    watch("b", b);
    line.leave(c); // not first: nobody's turn changed
    await tick();
    expect(woken).toEqual([]);
    hold.end();
    await tick();
    expect(woken).toEqual(["a"]);
    line.leave(a); // b is first now
    await tick();
    expect(woken).toEqual(["a", "b"]);
    line.leave(b);
  });

  it("a grant nobody ended stops counting at its validity end; renew() moves that end", () => {
    const line = new LocalLines().of("k");
    const now = performance.now();
    const hold = line.hold(now + 100);
    expect(line.held(now)).toBe(1);
    expect(line.heldUntil(now)).toBe(now + 100);
    hold.renew(now + 500);
    expect(line.held(now + 200)).toBe(1);
    expect(line.held(now + 500)).toBe(0);
    expect(line.heldUntil(now + 500)).toBe(0);
    hold.end(); // late end of a grant that already stopped counting: nothing happens
    expect(line.held(now + 500)).toBe(0);
  });

  it("a first waiter silent beyond its patience while free to go is dropped; it can join again", () => {
    const line = new LocalLines().of("k");
    const gone = line.join(50);
    const next = line.join(50);
    const now = performance.now();
    line.prune(next, now + 10); // still within its patience
    expect(line.isFirst(gone)).toBe(true);
    line.prune(gone, now + 1_000); // never drops itself
    expect(line.isFirst(gone)).toBe(true);
    const held = line.hold(now + 10_000);
    line.prune(next, now + 1_000); // waiting behind a valid grant is not silence
    expect(line.isFirst(gone)).toBe(true);
    held.end();
    line.prune(next, performance.now() + 1_000);
    expect(gone.evicted).toBe(true);
    expect(line.isFirst(next)).toBe(true);
    line.rejoin(gone);
    expect(gone.evicted).toBe(false);
    line.leave(next);
    expect(line.isTurn(gone)).toBe(true);
    line.leave(gone);
  });

  it("an idle line is dropped; a busy one is kept", () => {
    const lines = new LocalLines();
    const hold = lines.of("a").hold(FAR());
    const spot = lines.of("b").join(1_000);
    expect(lines.size).toBe(2);
    hold.end();
    expect(lines.peek("a")).toBeUndefined();
    expect(lines.size).toBe(1);
    lines.peek("b")?.leave(spot);
    expect(lines.size).toBe(0);
    // a grant that expired without ending: dropped when next looked at
    const c = lines.of("c");
    c.hold(performance.now() - 1);
    expect(c.idle).toBe(true);
    expect(lines.peek("c")).toBeUndefined();
  });

  it("only the first waiter's offer is taken, once; leaving or withdrawing removes it", () => {
    const line = new LocalLines().of("k");
    const hold = line.hold(FAR());
    const a = line.join(1_000);
    const b = line.join(1_000);
    const offer = (name: string): Offer => ({
      next: () => ({ token: name, ttl: 1, timeoutMs: 1 }),
      accept: () => {},
    });
    line.offer(b, offer("b")); // not first: ignored
    expect(line.takeOffer()).toBeUndefined();
    line.offer(a, offer("a"));
    expect(line.takeOffer()?.next()?.token).toBe("a");
    expect(line.takeOffer()).toBeUndefined();
    line.offer(a, offer("a"));
    line.withdraw(a);
    expect(line.takeOffer()).toBeUndefined();
    line.offer(a, offer("a"));
    line.leave(a);
    expect(line.takeOffer()).toBeUndefined();
    line.offer(b, offer("b"));
    expect(line.takeOffer()?.next()?.token).toBe("b");
    hold.end();
  });

  it("hands over at most HANDOVER_RUN_MAX times in a row, then once to the nodes", () => {
    const line = new LocalLines().of("k");
    const offer: Offer = { next: () => undefined, accept: () => {} };
    const taken: boolean[] = [];
    for (let i = 0; i < 2 * (HANDOVER_RUN_MAX + 1); i++) {
      const spot = line.join(1_000, 100 + i);
      expect(line.firstPlace()).toBe(100 + i);
      line.offer(spot, offer);
      taken.push(line.takeOffer() !== undefined);
      line.leave(spot);
    }
    const run = [...Array(HANDOVER_RUN_MAX).fill(true), false];
    expect(taken).toEqual([...run, ...run]);
  });
});
