// Bindings the tests see through `import { env } from "cloudflare:workers"`: wrangler.toml [vars]
// plus EDGELOCK_NODES from vitest.config.ts (the global setup's dev cluster).
declare namespace Cloudflare {
  interface Env {
    LOCK_PREFIX: string;
    EDGELOCK_NODES: string;
  }
  interface GlobalProps {
    mainModule: typeof import("../../../functions/worker");
  }
}

// workers-types declares `clearTimeout(timeoutId: number | null)`, while src/lock/handle.ts passes
// `number | undefined` (fine at run time in workerd, Node and the DOM, whose types accept
// `undefined`). This overload lets `tsc -p test/workers` check src/ until handle.ts guards it.
declare function clearTimeout(timeoutId?: number | null): void;
