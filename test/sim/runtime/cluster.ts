/**
 * The simulated nodes of a schedule and what happens to them: N {@link SimNode}s, each on a clock
 * of its own (`node-clock.ts`: its rate and epoch offset; a restart keeps it running), each up,
 * paused (requests wait and run on resume, as on a stopped process whose socket buffers fill) or
 * down (killed: connections are refused), with the node faults
 * (pause, resume, kill, restart with or without data) and the fan-out of PUBLISH to the wake-up
 * streams open on that node. Every restart that lost the data is recorded for the checker, and so
 * is every change of a lock key and every cleanup's tombstone, converted from the node's clock to
 * virtual time (the checker's properties are stated in virtual time).
 *
 * The clients' side of the network (request fates, streams) is `network.ts`, whose `SimNetwork`
 * is this cluster plus the clients' links to it.
 *
 * @module
 */

import { type ScriptResult, SimNode } from "../../../src/memory";
import { SCRIPTS } from "../../../src/scripts";
import { SEMAPHORE_SCRIPTS } from "../../../src/scripts/semaphore";
import type { Wipe } from "../../safety/harness/history";
import { sha1 } from "../node/sha1";
import type { Weather } from "./fates";
import { NodeClock, type NodeClockSpec } from "./node-clock";
import type { Random } from "./random";
import type { Scheduler } from "./scheduler";

/**
 * A lock key's value on a node after a script changed it (value, or expiry): it holds `value`
 * from `at` until the next state of that key on that node, or `expiresAt`.
 */
export interface KeyState {
  readonly node: number;
  readonly key: string;
  readonly at: number;
  readonly value: string | null;
  /**
   * Virtual time from which its expiry has taken it (`Infinity`: none): its deadline on the
   * node's clock, converted (`NodeClock.goneAt`).
   */
  readonly expiresAt: number;
}

/**
 * The cleanup of a failed round's `token` that ran on `node` at `at`: a DISCARD, whose tombstone
 * keeps a late request of the round from placing the token until `until` (docs/SAFETY.md L3; for
 * a resume's undo for ever: its tombstone outlives the ticket's token a late RESUME could swap), a
 * RELEASE carrying the token's tombstone (`until`: the tombstone's life, as for a DISCARD), or a
 * RELEASE sent without room service (a granted round's release, and how a cleanup was sent
 * before DISCARD: `until` is then the round's TTL after it, see `SimCluster.#observe`), or a
 * permit call's end (RELEASE_SLOTS or DISCARD_SLOTS, a trim included: always with the call's
 * tombstone).
 * `at` and `until` are virtual time (`until`: the tombstone's PTTL on the node's clock, converted).
 */
export interface TokenEnd {
  readonly node: number;
  readonly at: number;
  readonly token: string;
  readonly until: number;
}

/**
 * A semaphore look (SEM_ACQUIRE) or pass (SEM_PASS) of a permit call's `token` that ran on
 * `node` at `at` (virtual), with the place and the preference it carried: what tells a permit
 * waiter's tokens (by its place) and when it preferred a slot (`check/permit-waits.ts`).
 */
export interface RoomVisit {
  readonly node: number;
  readonly at: number;
  readonly token: string;
  /** The semaphore's keys' stem on the nodes (`sim:s0` for `sim:s0:permit:<j>`). */
  readonly stem: string;
  /** The caller's place (epoch ms of its call), when it carried one. */
  readonly place?: number | undefined;
  /** The slot it asked to prefer, and until when (virtual; the node's `preferMs` converted). */
  readonly prefer?: { readonly slot: number; readonly until: number } | undefined;
}

/**
 * Requests sent to `node` during [from, to) (ms of virtual time after the schedule's start) arrive
 * `by` ms (virtual) late. Sending and travelling happen outside the node: its clock has no part.
 */
export interface LateWindow {
  readonly node: number;
  readonly from: number;
  readonly to: number;
  readonly by: number;
}

/**
 * Instance `client`'s link to `node` is cut during [from, to) (ms of virtual time after the
 * schedule's start; default: from the start, for ever): every request it sends then fails as a
 * refused connection, before the node sees it. Other clients reach the node (a partition).
 */
export interface LinkCut {
  readonly client: number;
  readonly node: number;
  readonly from?: number | undefined;
  readonly to?: number | undefined;
}

/** Up, paused (requests queue until resumed) or down (requests are refused). */
export type NodeState = "up" | "paused" | "down";

/** A request that reached a node: run it (now, or on resume), or refuse it (the node died). */
export interface Arrival {
  run(): void;
  refuse(): void;
}

/** A wake-up stream open on a node (see `subscriber.ts`). */
export interface NodeStream {
  readonly channel: string;
  /** A PUBLISH on its channel reached the client. */
  deliver(message: string): void;
  /** Its node went down: the connection is gone. */
  broken(): void;
  /** The client it belongs to (see {@link SimCluster.closeStreamsOf}). */
  readonly owner?: Owner | undefined;
}

/** One node and its condition. */
export interface Host {
  readonly node: SimNode;
  /** The node's clock (what its keys expire by), which restarts do not touch. */
  readonly clock: NodeClock;
  state: NodeState;
  /** Requests that arrived while paused: run on resume, refused on kill. */
  pending: Arrival[];
  readonly streams: Set<NodeStream>;
  /** Fates of the wake-up messages this node sends. */
  readonly random: Random;
  /** When {@link SimCluster.kill} took it down (a later restart's wipe starts there). */
  killedAt: number | undefined;
}

/** The client a link belongs to: once dead, no reply or wake-up reaches its code any more. */
export interface Owner {
  readonly dead: boolean;
}

/**
 * The SHA-1 and name of each of the library's scripts, by source: the lock's and the semaphore's,
 * so a semaphore script is observed (its slots are lock keys), traced by name and replaced by its
 * mutant as the lock's are.
 */
const LIBRARY = [...SCRIPTS, ...SEMAPHORE_SCRIPTS];
const SHA_OF = new Map(LIBRARY.map((s) => [s.lua, s.sha1]));
const NAME_OF = new Map(LIBRARY.map((s) => [s.sha1, s.name]));

/**
 * @example
 * const exact = { rate: 1, offsetMs: 0 };
 * const clocks = [exact, exact, exact];
 * const cluster = new SimCluster(scheduler, random.split("net"), clocks, WEATHERS.harsh);
 * scheduler.after(500, () => cluster.restart(1, false, 200));
 */
export class SimCluster {
  readonly hosts: Host[];
  readonly wipes: Wipe[] = [];
  /** Every change of a lock key on every node, in order (for the blocked-by-nobody property). */
  readonly keyStates: KeyState[] = [];
  /** Every cleanup of a failed round that ran (see {@link TokenEnd}). */
  readonly tokenEnds: TokenEnd[] = [];
  /** Every semaphore look and pass that ran (see {@link RoomVisit}). */
  readonly roomVisits: RoomVisit[] = [];
  /** Constructed delays (named regressions): see {@link LateWindow}. */
  late: readonly LateWindow[] = [];
  /** Cut links (named regressions): see {@link LinkCut}. */
  cuts: readonly LinkCut[] = [];
  /** Virtual time the schedule started (windows count from it). */
  readonly origin: number;
  readonly #last = new Map<string, KeyState>();
  /** Per token, the longest TTL (node ms) a request placing it carried: its round's T. */
  readonly #ttl = new Map<string, number>();

  constructor(
    readonly scheduler: Scheduler,
    /** Root of every link's, stream's and node's random stream. */
    readonly random: Random,
    /** One clock per node (its rate and epoch offset). */
    clocks: readonly NodeClockSpec[],
    readonly weather: Weather,
    /** Lua to run instead of a script, by its SHA-1 (mutants). */
    private readonly overrides: ReadonlyMap<string, string> = new Map(),
    /** Called with one line per request, reply, publish and node fault (for replay traces). */
    readonly trace?: ((line: string) => void) | undefined,
  ) {
    this.origin = scheduler.now;
    this.hosts = clocks.map((spec, i) => {
      const clock = new NodeClock(scheduler, spec);
      const host: Host = {
        node: new SimNode({ now: () => clock.now(), sha1 }),
        clock,
        state: "up",
        pending: [],
        streams: new Set(),
        random: random.split(`publish:${i}`),
        killedAt: undefined,
      };
      host.node.onPublish = (channel, message) => this.#publish(i, host, channel, message);
      return host;
    });
  }

  /** The host of node `index`. */
  host(index: number): Host {
    const host = this.hosts[index];
    if (host === undefined) throw new RangeError(`no node ${index}`);
    return host;
  }

  /** A request reaches node `index` now: it runs, waits for a resume, or is refused. */
  arrive(index: number, arrival: Arrival): void {
    const host = this.host(index);
    if (host.state === "down") arrival.refuse();
    else if (host.state === "paused") host.pending.push(arrival);
    else arrival.run();
  }

  /** EVALSHA on node `index` (atomic, at its clock's current reading), or its mutant. */
  evalsha(index: number, sha: string, keys: string[], args: string[]): ScriptResult {
    const { node } = this.host(index);
    const mutant = this.overrides.get(sha);
    const result =
      mutant === undefined || !node.knows(sha)
        ? node.evalsha(sha, keys, args)
        : node.eval(mutant, keys, args, sha);
    // NOSCRIPT (after a restart) ran nothing.
    if (result.ok) this.#observe(index, sha, keys, args);
    return result;
  }

  /** The delay of a request sent now to node `index` by a {@link LateWindow}, if one covers it. */
  lateBy(index: number): number | undefined {
    const since = this.scheduler.now - this.origin;
    const window = this.late.find((w) => w.node === index && since >= w.from && since < w.to);
    return window?.by;
  }

  /** Whether a request client `client` sends now to node `index` fails on a {@link LinkCut}. */
  cut(client: number, index: number): boolean {
    const since = this.scheduler.now - this.origin;
    return this.cuts.some(
      (c) =>
        c.client === client &&
        c.node === index &&
        since >= (c.from ?? 0) &&
        since < (c.to ?? Number.POSITIVE_INFINITY),
    );
  }

  /**
   * Record what a script left on the lock keys it was given (and a cleanup's token), in virtual
   * time: a deadline the node keeps by its own clock becomes the virtual time its clock reaches it.
   */
  #observe(index: number, sha: string, keys: readonly string[], args: readonly string[]): void {
    const { node, clock } = this.host(index);
    const now = this.scheduler.now;
    // The node's reading, the one the script ran at (nothing ran on it since).
    const nodeNow = clock.now();
    // Key triples, then (ACQUIRE, HANDOVER, RESUME, DISCARD and the semaphore's scripts but
    // SEM_INSPECT) a tombstone key that is no lock key; a semaphore's triples are its slots.
    const triples =
      keys.length > 3 && keys.length % 3 === 1 ? (keys.length - 1) / 3 : Math.ceil(keys.length / 3);
    for (let i = 0; i < triples; i++) {
      const key = keys[3 * i] as string;
      const value = node.type(key) === "string" ? node.get(key) : null;
      const pttl = value === null ? -2 : node.pttl(key);
      const expiresAt =
        pttl === -1 ? Number.POSITIVE_INFINITY : clock.goneAt(nodeNow + Math.max(0, pttl));
      const id = `${index}\n${key}`;
      const last = this.#last.get(id);
      const live = last !== undefined && last.value !== null && last.expiresAt > now;
      const same = live ? last.value === value && last.expiresAt === expiresAt : value === null;
      if (same) continue;
      const state = { node: index, key, at: now, value, expiresAt };
      this.#last.set(id, state);
      this.keyStates.push(state);
    }
    const name = NAME_OF.get(sha);
    if (name === "semaphore-acquire" || name === "semaphore-pass") {
      this.#visit(index, name === "semaphore-acquire", keys, args);
    }
    // The token a script places and its TTL: ACQUIRE (t, T), RESUME (t₀, t′, T), HANDOVER (t, t′, T).
    const placing =
      name === "acquire"
        ? [args[0], args[1]]
        : name === "resume" || name === "handover"
          ? [args[1], args[2]]
          : [];
    const [placed, ttl] = placing;
    if (placed !== undefined && ttl !== undefined && Number(ttl) > (this.#ttl.get(placed) ?? 0)) {
      this.#ttl.set(placed, Number(ttl));
    }
    const token = args[0];
    if (token === undefined) return;
    const tombstone = keys.length > 3 && keys.length % 3 === 1 ? keys[keys.length - 1] : undefined;
    if (name === "semaphore-release" || name === "semaphore-discard") {
      // A permit call's end (its release, its give-up, or the trim of the slots it was not
      // granted): always with the call's tombstone, so no L3 exception (its life: `keepMs`,
      // args[2], when the script wrote none — a mutant).
      const left = tombstone === undefined ? -2 : node.pttl(tombstone);
      const until = clock.goneAt(nodeNow + (left >= 0 ? left : Number(args[2])));
      this.tokenEnds.push({ node: index, at: now, token, until });
    } else if (name === "discard") {
      // The tombstone's life; a resume's undo (the ticket's token in args[2]) outlives the
      // ticket's token there, so no late RESUME of its round may ever place (L3).
      const left = tombstone === undefined ? -2 : node.pttl(tombstone);
      const until =
        args[2] !== undefined
          ? Number.POSITIVE_INFINITY
          : clock.goneAt(nodeNow + (left >= 0 ? left : Number(args[1])));
      this.tokenEnds.push({ node: index, at: now, token, until });
    } else if (name === "release" && tombstone !== undefined) {
      // A release carrying the token's tombstone (a queued call's grant everywhere; an acquire
      // round's grant where a request of the round may still run: src/lock/holds.ts `Unheard`)
      // ends the token like a DISCARD: a placement while the tombstone lives is a bug (L3). Its
      // life is the one asked for (`keepMs`, args[3]) when the script wrote none (a mutant).
      const left = node.pttl(tombstone);
      const until = clock.goneAt(nodeNow + (left >= 0 ? left : Number(args[3])));
      this.tokenEnds.push({ node: index, at: now, token, until });
    } else if (name === "release") {
      // A release without a tombstone (the round's every request answered, or one of 0.1's
      // forms): a request of the round that timed
      // out on the client (the release waited one request timeout for it: src/lock/holds.ts) and
      // runs here later places the token for T. L3's exception for a cleanup, a request running
      // more than T after it, applies to it as to a DISCARD: such a request places t whatever the
      // end wrote (a tombstone lives T). So it is bounded like a DISCARD whose tombstone lived the
      // round's T; placements within T after it are still counted. (Unbounded, it flagged two
      // granted rounds' ACQUIREs running 1.1 s and 1.2 s — over 4 T — after their releases on
      // 2 of 3 nodes, their tokens overlapping 1 ms: seed 20261144.) T unknown (no placing
      // request seen): unbounded. Since such a release writes the tombstone wherever a request
      // of the round went unheard (above), a late placement after a release without one is
      // a request the client heard answer, re-run: none in the simulation.
      const keep = this.#ttl.get(token);
      const until = keep === undefined ? Number.POSITIVE_INFINITY : clock.goneAt(nodeNow + keep);
      this.tokenEnds.push({ node: index, at: now, token, until });
    }
  }

  /**
   * Record a semaphore look (`acquire`: SEM_ACQUIRE's ARGV, place 8th, prefer 6th, preferMs 7th)
   * or pass (SEM_PASS's: place 5th, keep 3rd, preferMs 4th). A preference is recorded whether or
   * not the script registered it (a look that placed or found the token registers nothing).
   */
  #visit(index: number, acquire: boolean, keys: readonly string[], args: readonly string[]): void {
    const stem = /^(.*):permit:\d+$/.exec(keys[0] ?? "")?.[1];
    const token = args[0];
    if (stem === undefined || token === undefined) return;
    const [place, prefer, preferMs] = acquire
      ? [args[7], args[5], args[6]]
      : [args[4], args[2], args[3]];
    const { clock } = this.host(index);
    const until = clock.goneAt(clock.now() + Number(preferMs ?? 0));
    this.roomVisits.push({
      ...{ node: index, at: this.scheduler.now, token, stem },
      ...(place ? { place: Number(place) } : {}),
      ...(prefer ? { prefer: { slot: Number(prefer), until } } : {}),
    });
  }

  /** EVAL on node `index`, or the mutant of that script (cached under the real SHA-1). */
  eval(index: number, source: string, keys: string[], args: string[]): ScriptResult {
    const { node } = this.host(index);
    const sha = SHA_OF.get(source);
    const mutant = sha === undefined ? undefined : this.overrides.get(sha);
    const result =
      mutant === undefined ? node.eval(source, keys, args) : node.eval(mutant, keys, args, sha);
    if (sha !== undefined && result.ok) this.#observe(index, sha, keys, args);
    return result;
  }

  /** The library's name for a script (`acquire`, ...), by SHA-1 or source, for traces. */
  scriptName(shaOrSource: string): string {
    return NAME_OF.get(SHA_OF.get(shaOrSource) ?? shaOrSource) ?? "script";
  }

  /** Stop node `index` (SIGSTOP): requests wait until {@link resume}. */
  pause(index: number): void {
    const host = this.host(index);
    if (host.state !== "up") return;
    host.state = "paused";
    this.trace?.(`n${index} paused`);
  }

  /** Continue node `index`: the requests that waited run, in the order they arrived. */
  resume(index: number): void {
    const host = this.host(index);
    if (host.state !== "paused") return;
    host.state = "up";
    this.trace?.(`n${index} resumed (${host.pending.length} waiting)`);
    const pending = host.pending;
    host.pending = [];
    for (const p of pending) p.run();
  }

  /** Kill node `index`: waiting requests and open streams break, new requests are refused. */
  kill(index: number): void {
    const host = this.host(index);
    if (host.state !== "down") host.killedAt = this.scheduler.now;
    this.#down(index, host);
  }

  /**
   * Restart node `index` after `downMs` down (killing it now unless {@link kill} did), with its
   * data or empty; the script cache is always empty afterwards. An empty restart is recorded in
   * {@link wipes} from when it went down to when it answered again.
   */
  restart(index: number, keepData: boolean, downMs = 0): void {
    const host = this.host(index);
    const at = host.state === "down" && host.killedAt !== undefined ? host.killedAt : undefined;
    const from = at ?? this.scheduler.now;
    this.#down(index, host);
    this.scheduler.after(downMs, () => {
      host.node.restart(keepData);
      host.state = "up";
      host.killedAt = undefined;
      this.trace?.(`n${index} up ${keepData ? "with its data" : "empty"}`);
      if (!keepData) this.wipes.push({ node: index, at: from, backAt: this.scheduler.now });
    });
  }

  /** Whether a stream on node `index` can open now; then it receives the channel's messages. */
  attach(index: number, stream: NodeStream): boolean {
    const host = this.host(index);
    if (host.state !== "up") return false;
    host.streams.add(stream);
    return true;
  }

  /** Stop delivering to `stream` (unsubscribed or dropped). */
  detach(index: number, stream: NodeStream): void {
    this.host(index).streams.delete(stream);
  }

  /** Whether `stream` still receives node `index`'s messages. */
  /** A client's process was killed: every stream of `owner` closes on every node (PUBLISH skips it). */
  closeStreamsOf(owner: Owner): void {
    for (const host of this.hosts) {
      for (const stream of [...host.streams])
        if (stream.owner === owner) host.streams.delete(stream);
    }
  }

  attached(index: number, stream: NodeStream): boolean {
    return this.host(index).streams.has(stream);
  }

  #down(index: number, host: Host): void {
    host.state = "down";
    this.trace?.(`n${index} down`);
    const pending = host.pending;
    host.pending = [];
    for (const p of pending) p.refuse();
    const streams = [...host.streams];
    host.streams.clear();
    for (const stream of streams) stream.broken();
  }

  /** PUBLISH's reply: the streams subscribed to `channel` there (a lost message still counts). */
  #publish(index: number, host: Host, channel: string, message: string): number {
    const { random } = host;
    this.trace?.(`n${index} publish ${channel} ${message}`);
    let receivers = 0;
    for (const stream of host.streams) {
      if (stream.channel !== channel) continue;
      receivers++;
      if (random.chance(this.weather.lostMessage)) continue;
      this.scheduler.after(random.between(this.weather.delay), () => {
        if (host.streams.has(stream)) stream.deliver(message);
      });
    }
    return receivers;
  }
}
