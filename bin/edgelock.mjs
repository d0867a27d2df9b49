#!/usr/bin/env node
// The `edgelock` command. Installed from npm it runs the built CLI (dist/dev/cli.js; the package
// ships no sources). In a checkout of the repository it runs the TypeScript source through tsx (a
// devDependency there), so it never runs a stale build and needs none: `npm install` builds
// nothing, the package has no `prepare` script.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const source = fileURLToPath(new URL("../src/dev/cli.ts", import.meta.url));
if (!existsSync(source)) {
  await import(new URL("../dist/dev/cli.js", import.meta.url).href);
} else {
  const args = ["--import", "tsx", source, ...process.argv.slice(2)];
  const child = spawn(process.execPath, args, { stdio: "inherit" });
  // Ctrl-C reaches the child through the terminal's process group; a signal sent to this process
  // alone is passed on, so the dev cluster always gets to stop its redis-servers.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal));
  }
  // Our parent exiting (npm stopped by `kill $!` stops its `sh -c` and nothing else) stops the
  // child as a SIGTERM would; the CLI watches its own parent, this launcher, the same way.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid !== parent) child.kill("SIGTERM");
  }, 250);
  watch.unref();
  child.on("exit", (code, signal) => {
    if (signal !== null) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
