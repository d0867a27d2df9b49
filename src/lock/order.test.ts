import { describe, expect, it, vi } from "vitest";
import { mayHold } from "./holds";
import { ORDER_POLL_MS, ReleaseOrder } from "./order";

describe("ReleaseOrder", () => {
  const tick = () => new Promise((r) => setTimeout(r, 0));

  it("after() waits until every release tracked so far ended; ended entries disappear", async () => {
    const order = new ReleaseOrder(2);
    expect(order.after(0, "k")).toBeUndefined();
    const first = order.track(0, "k", 10_000);
    const second = order.track(0, "k", 10_000);
    expect(order.after(1, "k")).toBeUndefined(); // per node
    expect(order.after(0, "other")).toBeUndefined(); // per key
    let settled = false;
    void order
      .after(
        0,
        "k",
      )?.(10_000)
      .then(() => {
        settled = true;
      });
    const later = order.track(0, "k", 10_000); // tracked after the wait began: not waited for
    first();
    await tick();
    expect(settled).toBe(false);
    second();
    await tick();
    expect(settled).toBe(true);
    later();
    expect(order.after(0, "k")).toBeUndefined();
  });

  it("is kept per key: a release of a set holds up an acquire of each of its keys", async () => {
    const order = new ReleaseOrder(1);
    const ended = order.track(0, ["a", "b"], 10_000);
    expect(order.after(0, "c")).toBeUndefined();
    let settled = 0;
    for (const keys of ["a", "b", ["b", "c"]]) {
      void order
        .after(
          0,
          keys,
        )?.(10_000)
        .then(() => {
          settled++;
        });
    }
    await tick();
    expect(settled).toBe(0);
    ended();
    await tick();
    expect(settled).toBe(3);
    expect(order.tracked(0)).toBe(0);
    // And a release of one key holds up an acquire of a set containing it.
    const single = order.track(0, "a", 10_000);
    expect(order.after(0, ["a", "b"])).toBeDefined();
    single();
    expect(order.after(0, ["a", "b"])).toBeUndefined();
  });

  it("a release that never reports back stops holding anyone up after its worst case", async () => {
    const order = new ReleaseOrder(1);
    order.track(0, "k", 20); // never ended
    const wait = order.after(0, "k");
    expect(wait).toBeDefined();
    await wait?.(10_000); // resolves at the release's worst case, not the waiter's limit
    expect(order.after(0, "k")).toBeUndefined();
  });

  it("a waiter waits at most the time it allows, whatever the releases' worst case", async () => {
    const order = new ReleaseOrder(1);
    order.track(0, "k", 60_000); // never ended
    await order.after(0, "k")?.(20);
    expect(order.after(0, "k")).toBeDefined(); // still tracked for others
  });

  it("records that never report back are swept once enough keys are tracked", async () => {
    const order = new ReleaseOrder(1);
    for (let batch = 0; batch < 10; batch++) {
      for (let i = 0; i < 100; i++) order.track(0, `k${batch}:${i}`, 1); // never ended
      await new Promise((r) => setTimeout(r, 5));
    }
    // 1,000 keys tracked, each past its worst case 1 ms later: at most about twice a batch left.
    expect(order.tracked(0)).toBeLessThanOrEqual(300);
  });

  it("on Workers a waiter polls on its own timer instead of being woken by the release", async () => {
    vi.stubGlobal("navigator", { userAgent: "Cloudflare-Workers" });
    try {
      const order = new ReleaseOrder(1);
      const ended = order.track(0, "k", 60_000);
      let settled = false;
      void order
        .after(
          0,
          "k",
        )?.(60_000)
        .then(() => {
          settled = true;
        });
      ended();
      await tick();
      expect(settled).toBe(false); // the release resolved nothing of the waiter's
      await new Promise((r) => setTimeout(r, 3 * ORDER_POLL_MS));
      expect(settled).toBe(true); // its own next look found the release ended
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe("mayHold", () => {
  it("answers at once for a decided node, follows an acquire in flight, gives up after ms", async () => {
    expect(await mayHold(true, 10)).toBe(true);
    expect(await mayHold(false, 10)).toBe(false);
    expect(await mayHold(undefined, 10)).toBe(true); // a node the round did not ask
    expect(await mayHold(Promise.resolve(false), 1_000)).toBe(false);
    const started = performance.now();
    expect(await mayHold(new Promise<boolean>(() => {}), 20)).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
