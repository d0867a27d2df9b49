/**
 * The contending clients of a safety run. Each client loops: pick a key, `acquire` it (with a
 * seeded `wait`), do the critical section against the protected resource, sometimes extend,
 * release (or, now and then, "crash" and let the lock expire, or hand it on with `lock.ticket()` to
 * a mailbox of the process, from which a later client `resume`s it — a ticket is put there twice
 * now and then, as a queue may deliver it), and record a {@link GrantRecord}.
 *
 * The critical section behaves like a careful user: it starts only with enough validity left,
 * and writes only while `lock.signal` has not aborted and the validity has not run low. What the
 * lock cannot protect against (a process stalled between that check and the write landing) shows
 * up as `sectionsOverran` in the report, not silently.
 *
 * @module
 */

import { createLocks, type LockTicket } from "../../../src/index";
import { now } from "./clock";
import type { GrantRecord } from "./history";
import { createRng, derive, type Rng } from "./random";
import { ProtectedResource } from "./resource";

/** What one process's clients need; sent to child processes as JSON. */
export interface ClientsConfig {
  /** The lock cluster's `{ url, token }`. */
  readonly nodes: readonly { readonly url: string; readonly token: string }[];
  /** `redis://` URL of the protected resource. */
  readonly resourceUrl: string;
  /** Namespace of this run (lock prefix and resource keys). */
  readonly namespace: string;
  readonly keys: readonly string[];
  readonly lease: number;
  readonly fencing: boolean;
  readonly wake: boolean;
  readonly clients: number;
  readonly seed: number;
  /** Clock source name, used in grant ids. */
  readonly source: string;
  /** Per-node request timeout; undefined = the library default. */
  readonly requestTimeout?: number;
}

/** What one process's clients did. */
export interface ClientsResult {
  readonly grants: GrantRecord[];
  /** `acquire` events by result (granted, busy, unavailable, invalid). */
  readonly rounds: Record<string, number>;
  /** Failed `acquire` calls by error name. */
  readonly failures: Record<string, number>;
  /** Unexpected exceptions (bugs in the harness or the library), with their messages. */
  readonly crashes: string[];
  /** A few distinct node errors behind failed acquire calls, for diagnosis. */
  readonly nodeErrors: string[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const bump = (map: Record<string, number>, key: string) => {
  map[key] = (map[key] ?? 0) + 1;
};

/** Validity end on the shared clock, from the epoch `validUntil` the lock reports. */
const validEndOf = (validUntil: number): number => now() + (validUntil - Date.now());

/**
 * Run `config.clients` clients until `stop` aborts; resolves with everything they recorded.
 *
 * @example
 * const stop = new AbortController(); setTimeout(() => stop.abort(), 5_000);
 * const { grants } = await runClients(config, stop.signal);
 */
export async function runClients(config: ClientsConfig, stop: AbortSignal): Promise<ClientsResult> {
  const result: ClientsResult = {
    grants: [],
    rounds: {},
    failures: {},
    crashes: [],
    nodeErrors: [],
  };
  const resource = new ProtectedResource(config.resourceUrl, `${config.namespace}res:`);
  // Tickets handed on by this process's clients, taken over by the next client that looks here.
  const mailbox: LockTicket[] = [];
  try {
    await Promise.all(
      Array.from({ length: config.clients }, (_, i) =>
        client(config, i, resource, stop, result, mailbox).catch((error: unknown) => {
          result.crashes.push(`client ${i}: ${(error as Error)?.stack ?? String(error)}`);
        }),
      ),
    );
  } finally {
    resource.close();
  }
  return result;
}

async function client(
  config: ClientsConfig,
  index: number,
  resource: ProtectedResource,
  stop: AbortSignal,
  result: ClientsResult,
  mailbox: LockTicket[],
): Promise<void> {
  const rng = createRng(derive(config.seed, config.source, "client", index));
  const { lease } = config;
  // One lock manager per client: independent clients, each with its own script cache.
  const locks = createLocks({
    nodes: config.nodes,
    prefix: `${config.namespace}lock:`,
    lease,
    fencing: config.fencing,
    wake: config.wake,
    // Waiters poll at least every quarter lease: more contention, more chances to catch a bug.
    retryDelayMax: Math.max(50, Math.round(lease / 4)),
    ...(config.requestTimeout === undefined ? {} : { requestTimeout: config.requestTimeout }),
    onEvent: (event) => {
      if (event.type === "acquire") bump(result.rounds, event.result);
    },
  });
  for (let n = 0; !stop.aborted; n++) {
    // Now and then take over a lock another client handed on (possibly a duplicate delivery).
    const parcel = mailbox.length > 0 && rng.chance(0.5) ? mailbox.shift() : undefined;
    // This harness locks one key at a time, so a ticket's key is a string.
    const key = (parcel?.key as string | undefined) ?? rng.pick(config.keys);
    const requested = now();
    let lock: Awaited<ReturnType<typeof locks.acquire>>;
    try {
      lock =
        parcel === undefined
          ? await locks.acquire(key, { wait: rng.int(0, 2 * lease), signal: stop })
          : await locks.resume(parcel);
    } catch (error) {
      if (stop.aborted) return;
      bump(result.failures, (error as Error)?.name ?? "unknown");
      noteNodeErrors(result, error);
      await sleep(rng.int(0, 50));
      continue;
    }
    const record: GrantRecord = {
      id: `${config.source}/c${index}#${n}`,
      source: config.source,
      key,
      requested,
      granted: now(),
      validEnd: validEndOf(lock.validUntil),
      fence: lock.fence,
      extended: 0,
      extendFailed: 0,
    };
    result.grants.push(record);
    lock.signal.addEventListener("abort", () => {
      // A loss, not the end the holder chose (a release also aborts the signal: LockEndedError).
      if ((lock.signal.reason as Error).name === "LockLostError") record.lostAt = now();
    });
    await criticalSection(config, resource, rng, lock, record);
    if (rng.chance(0.2)) {
      try {
        record.validEnd = validEndOf((await lock.extend()).validUntil);
        record.extended += 1;
      } catch {
        record.extendFailed += 1;
      }
    }
    if (rng.chance(0.03)) {
      // A crashed holder: never releases, the lock expires by its TTL.
      await sleep(rng.int(0, 20));
      continue;
    }
    record.releaseStart = now();
    if (rng.chance(0.08)) {
      // Hand it on instead (the interval ends here); a queue may deliver the ticket twice.
      try {
        const ticket = await lock.ticket();
        record.releaseStatus = "handed-on";
        mailbox.push(ticket);
        if (rng.chance(0.3)) mailbox.push(ticket);
        continue;
      } catch {
        // Not handed on (lost, or nodes failed): release as usual.
      }
    }
    record.releaseStatus = (await lock.release()).status;
    await sleep(rng.int(0, 15));
  }
}

/** Keep up to 8 distinct node error messages (they name node and host, never a token). */
function noteNodeErrors(result: ClientsResult, error: unknown): void {
  const outcomes = (error as { outcomes?: { error?: { message?: string } }[] }).outcomes ?? [];
  for (const o of outcomes) {
    const message = o.error?.message?.replace(/\d+(\.\d+)? ms/g, "… ms");
    if (
      message !== undefined &&
      result.nodeErrors.length < 8 &&
      !result.nodeErrors.includes(message)
    ) {
      result.nodeErrors.push(message);
    }
  }
}

/** Room left before the validity end that a write must keep (the signal aborts earlier still). */
const guard = (lease: number) => Math.max(20, Math.round(lease * 0.1));

function stillValid(lock: { signal: AbortSignal }, record: GrantRecord, lease: number): boolean {
  return !lock.signal.aborted && now() < record.validEnd - guard(lease);
}

async function criticalSection(
  config: ClientsConfig,
  resource: ProtectedResource,
  rng: Rng,
  lock: { signal: AbortSignal; fence: number | undefined },
  record: GrantRecord,
): Promise<void> {
  const { key } = record;
  if (record.validEnd - now() < config.lease * 0.3) {
    record.counter = { state: "abandoned", why: "too little validity to start" };
    return;
  }
  const readAt = now();
  const read = await resource.readCounter(key);
  await sleep(rng.int(1, 8)); // widen the race window on purpose
  if (!stillValid(lock, record, config.lease)) {
    record.counter = { state: "abandoned", read, why: "validity ran low before the write" };
  } else {
    try {
      await resource.writeCounter(key, read + 1);
      record.counter = { state: "done", read, readAt, ackAt: now() };
    } catch (error) {
      record.counter = { state: "uncertain", read, why: String(error) };
    }
  }
  if (!config.fencing || lock.fence === undefined) return;
  const fencedRead = await resource.readFenced(key);
  await sleep(rng.int(0, 4));
  if (!stillValid(lock, record, config.lease)) {
    record.fenced = { state: "abandoned", why: "validity ran low before the write" };
    return;
  }
  try {
    const accepted = await resource.writeFenced(key, lock.fence, fencedRead + 1);
    record.fenced = { state: "done", read: fencedRead, accepted, at: now() };
  } catch (error) {
    record.fenced = { state: "uncertain", read: fencedRead, why: String(error) };
  }
}
