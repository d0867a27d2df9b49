import { describe, expect, it } from "vitest";
import { mayHold } from "./holds";
import { ReleaseOrder } from "./order";

describe("ReleaseOrder", () => {
  it("after() settles once every release tracked so far ended; ended entries disappear", async () => {
    const order = new ReleaseOrder(2);
    expect(order.after(0, "k")).toBeUndefined();
    const first = order.track(0, "k", 10_000);
    const second = order.track(0, "k", 10_000);
    expect(order.after(1, "k")).toBeUndefined(); // per node
    expect(order.after(0, "other")).toBeUndefined(); // per key
    let settled = false;
    void order.after(0, "k")?.then(() => {
      settled = true;
    });
    first();
    await new Promise((r) => setTimeout(r, 0));
    expect(settled).toBe(false);
    second();
    await new Promise((r) => setTimeout(r, 0));
    expect(settled).toBe(true);
    expect(order.after(0, "k")).toBeUndefined();
  });

  it("a release that never reports back stops holding anyone up after its worst case", async () => {
    const order = new ReleaseOrder(1);
    order.track(0, "k", 20); // never ended
    expect(order.after(0, "k")).toBeDefined();
    await new Promise((r) => setTimeout(r, 30));
    expect(order.after(0, "k")).toBeUndefined();
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
