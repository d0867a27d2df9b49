// A waiter in its own process for the WAN section's absent-head measurement (head.ts): it waits for
// one key with its own `Locks` (streams open on every node, registered in every queue), tells the
// parent when its first look was refused, and is then paused (SIGSTOP: frozen with its streams
// open) or killed (SIGKILL: its streams close) by the parent. It never gets the lock while it runs.
//
// Started by head.ts with `fork` (tsx's loader flags are inherited through execArgv); argv[2] is
// `{ nodes, key, lease }` as JSON.
import { createLocks } from "../../src/index";

interface ChildArgs {
  readonly nodes: { url: string; token: string }[];
  readonly key: string;
  readonly lease: number;
}

const args = JSON.parse(process.argv[2] ?? "{}") as ChildArgs;
let told = false;
const locks = createLocks({
  nodes: args.nodes,
  lease: args.lease,
  onEvent(event) {
    if (event.type !== "acquire" || told) return;
    told = true;
    process.send?.({ type: "refused", result: event.result });
  },
});
locks
  .acquire(args.key, { wait: 60_000 })
  .then(async (lock) => {
    process.send?.({ type: "granted" });
    await lock.release();
  })
  .catch((error: unknown) => process.send?.({ type: "failed", error: String(error) }));
