// Lets `npm test` and `npm start` work in a fresh clone: install the locked dependencies once,
// when node_modules is missing or older than the lock file.
import { execSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";

const marker = "node_modules/.package-lock.json";
const stale =
  !existsSync(marker) || statSync(marker).mtimeMs < statSync("package-lock.json").mtimeMs;
if (stale) {
  console.error("edgelock: installing dependencies (npm ci)…");
  execSync("npm ci --no-audit --no-fund", { stdio: "inherit" });
}
