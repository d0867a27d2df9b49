import { afterEach, describe, expect, it, vi } from "vitest";
import type { RestNode, SubscriberLike } from "../../node";
import { ACQUIRE } from "../../scripts";
import { LINGER_MS, lingerMs, registration, WakeChannels, waiterEntry } from "./wake";

/** A subscriber whose events the test fires by hand (the I/O is covered in test/lock/wake.test.ts). */
class FakeSubscriber implements SubscriberLike {
  readonly listeners = new Map<string, ((data: unknown) => void)[]>();
  unsubscribed = 0;
  constructor(readonly channel: string) {}
  on(type: string, listener: (data: unknown) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  fire(type: string, data: unknown): void {
    for (const listener of this.listeners.get(type) ?? []) listener(data);
  }
  async unsubscribe(): Promise<void> {
    this.unsubscribed++;
  }
}

function fakeNode(index: number, opened: FakeSubscriber[], canSubscribe = true): RestNode {
  return {
    index,
    subscribe: (channel: string) => {
      if (!canSubscribe) return undefined;
      const subscriber = new FakeSubscriber(channel);
      opened.push(subscriber);
      return subscriber;
    },
  } as unknown as RestNode;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("waiter entries", () => {
  it("carry the deadline, the listener and a call id; ACQUIRE adds the place and the room TTL", () => {
    const before = Date.now();
    const entry = waiterEntry(5_000, "abc123");
    const [deadline, listener, id] = entry.member.split(":");
    expect(Number(deadline)).toBeGreaterThanOrEqual(before + 5_000);
    expect(listener).toBe("abc123");
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    expect(entry.place).toBeGreaterThanOrEqual(before);
    const waiter = registration(entry, 2_000.4);
    expect(ACQUIRE.args({ token: "t", ttl: 5_000, fencing: false, waiter })).toEqual([
      "t",
      "5000",
      "0",
      entry.member,
      String(entry.place),
      "2001",
    ]);
  });
});

describe("WakeChannels", () => {
  it("one stream per room and instance, on the instance's channel; ready once confirmed", () => {
    const opened: FakeSubscriber[] = [];
    const channels = new WakeChannels();
    const a = channels.watch(fakeNode(2, opened), "lock:k:wait");
    const b = channels.watch(fakeNode(0, opened), "lock:k:wait");
    expect(opened.map((s) => s.channel)).toEqual([`lock:k:wait:${channels.id}`]);
    expect([a?.opened, b?.opened]).toEqual([true, false]);
    // The second caller uses the stream where it is: node 2.
    expect(b?.node).toBe(2);
    expect(a?.ready).toBe(false);
    opened[0]?.fire("subscribe", 1);
    expect(a?.ready).toBe(true);
  });

  it("wakes only the member named in a message, also when it came before the caller slept", async () => {
    const opened: FakeSubscriber[] = [];
    const watch = new WakeChannels().watch(fakeNode(0, opened), "r");
    const subscriber = opened[0] as FakeSubscriber;
    let first = false;
    void watch?.woken("9:x:1").then(() => {
      first = true;
    });
    subscriber.fire("message", { channel: "r:x", message: "9:x:2" });
    await Promise.resolve();
    expect(first).toBe(false);
    subscriber.fire("message", { channel: "r:x", message: "9:x:1" });
    await Promise.resolve();
    expect(first).toBe(true);
    // A wake-up while its caller was looking at the lock is kept for its next sleep.
    subscriber.fire("message", { channel: "r:x", message: "9:x:3" });
    await expect(watch?.woken("9:x:3")).resolves.toBeUndefined();
  });

  it("keeps an unused stream open for the linger time, then closes it", () => {
    vi.useFakeTimers();
    const opened: FakeSubscriber[] = [];
    const channels = new WakeChannels();
    const node = fakeNode(0, opened);
    channels.watch(node, "r")?.close();
    vi.advanceTimersByTime(LINGER_MS - 1);
    expect(channels.size).toBe(1);
    // Reused within the linger time: no new stream, and the timer is off.
    const again = channels.watch(node, "r");
    expect(again?.opened).toBe(false);
    vi.advanceTimersByTime(LINGER_MS * 2);
    expect(opened[0]?.unsubscribed).toBe(0);
    again?.close();
    again?.close(); // idempotent
    vi.advanceTimersByTime(LINGER_MS);
    expect(channels.size).toBe(0);
    expect(opened[0]?.unsubscribed).toBe(1);
  });

  it("replaces a stream that failed or missed a release; closes a failed one at once", () => {
    const opened: FakeSubscriber[] = [];
    const channels = new WakeChannels();
    const node = fakeNode(0, opened);
    const first = channels.watch(node, "r");
    opened[0]?.fire("error", new Error("401"));
    expect(first?.failed).toBe(true);
    const second = channels.watch(node, "r");
    expect(second?.opened).toBe(true);
    first?.close();
    expect(opened[0]?.unsubscribed).toBe(1);
    second?.missed();
    expect(channels.watch(node, "r")?.opened).toBe(true);
    expect(opened).toHaveLength(3);
  });

  it("lingers on Node; on Workers an unused stream is forgotten, never aborted, never reused", () => {
    expect(lingerMs()).toBe(LINGER_MS);
    vi.stubGlobal("navigator", { userAgent: "Cloudflare-Workers" });
    try {
      expect(lingerMs()).toBe(-1);
    } finally {
      vi.unstubAllGlobals();
    }
    const opened: FakeSubscriber[] = [];
    const node = fakeNode(0, opened);
    const workers = new WakeChannels(-1);
    workers.watch(node, "r")?.close();
    expect(workers.size).toBe(0);
    expect(opened[0]?.unsubscribed).toBe(0);
    expect(workers.watch(node, "r")?.opened).toBe(true);
    const closing = new WakeChannels(0);
    closing.watch(node, "r")?.close();
    expect(closing.size).toBe(0);
    expect(opened[2]?.unsubscribed).toBe(1);
  });

  it("a node whose client cannot subscribe gives no watch", () => {
    expect(new WakeChannels().watch(fakeNode(0, [], false), "r")).toBeUndefined();
  });
});
