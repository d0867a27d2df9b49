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
