/**
 * Entry of a client process in a multi-process safety run (`node --import tsx child.ts`, forked
 * with an IPC channel). Protocol, parent → child: `start` (a `ClientsConfig`), `ping` (answered at
 * once with this process's clock, for the offset estimate in `clock.ts`), `stop`, `exit`.
 * Child → parent: `pong`, `done` (the recorded history), `error`.
 *
 * @module
 */

import { setMaxListeners } from "node:events";
import { type ClientsConfig, runClients } from "./clients";
import { now } from "./clock";

/** Messages from the parent. */
export type ToChild =
  | { readonly type: "start"; readonly config: ClientsConfig }
  | { readonly type: "ping"; readonly id: number }
  | { readonly type: "stop" }
  | { readonly type: "exit" };

/** Messages to the parent. */
export type FromChild =
  | { readonly type: "pong"; readonly id: number; readonly t: number }
  | { readonly type: "done"; readonly result: Awaited<ReturnType<typeof runClients>> }
  | { readonly type: "error"; readonly message: string };

const send = (message: FromChild) => process.send?.(message);
const stop = new AbortController();
setMaxListeners(0, stop.signal);

process.on("message", (message: ToChild) => {
  switch (message.type) {
    case "ping":
      send({ type: "pong", id: message.id, t: now() });
      break;
    case "start":
      runClients(message.config, stop.signal).then(
        (result) => send({ type: "done", result }),
        (error: unknown) => send({ type: "error", message: String(error) }),
      );
      break;
    case "stop":
      stop.abort(new Error("run stopped"));
      break;
    case "exit":
      process.disconnect();
      process.exit(0);
  }
});
// The parent going away ends this process too.
process.on("disconnect", () => process.exit(0));
