// Lets `npm test` and `npm start` work in a fresh clone: install the locked dependencies once,
// when node_modules is missing or older than the lock file. `npm install` rather than `npm ci`:
// registries that serve only this platform's optional binaries (Biome, Rollup, esbuild for other
// OSes) make `npm ci`'s lock-file check fail, while `npm install` honours the lock and skips them.
import { execSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";

const marker = "node_modules/.package-lock.json";
// npm writes both files in the same install; a lock file clearly newer (a pull) means reinstall.
const stale =
  !existsSync(marker) || statSync("package-lock.json").mtimeMs > statSync(marker).mtimeMs + 1_000;
if (stale) {
  console.error("edgelock: installing dependencies (npm install)…");
  execSync("npm install --no-audit --no-fund", { stdio: "inherit" });
}
