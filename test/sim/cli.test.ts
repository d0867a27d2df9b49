// `npm run sim`, spawned as a user runs it: what it prints, and its exit codes.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const run = (...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "scripts/sim.ts", ...args], {
    encoding: "utf8",
    timeout: 120_000,
  });

describe("npm run sim", () => {
  it("prints schedules/s, operations and violations, and exits 0", () => {
    const { status, stdout } = run("--schedules", "20", "--seed", "5");
    expect(stdout).toContain("edgelock simulation: 20 schedules from seed 5");
    expect(stdout).toMatch(/^20 schedules in \d+\.\d s \(\d+\.\d schedules\/s\)$/m);
    expect(stdout).toMatch(/^operations \d+ · grants \d+ · simulated events \d+$/m);
    expect(stdout).toMatch(
      /^violations: 0 bugs; \d+ schedules with the expected empty-restart hazard$/m,
    );
    expect(status).toBe(0);
  }, 120_000);

  it("with a fix undone, prints the shrunk schedule and how to replay it, and exits 1", () => {
    const { status, stdout } = run(
      "--schedules",
      "400",
      "--seed",
      "4", // finds the bug and shrinks it in a few seconds (seed 1: three times as long)
      "--mutant",
      "a-extend-shortens",
    );
    expect(stdout).toContain("(mutant a-extend-shortens)");
    expect(stdout).toMatch(/^violations: 1 bugs;/m);
    const replay =
      /^bugs in schedule \(replay: npm run sim -- --seed 4 --path ([\d:]+) --mutant a-extend-shortens\):$/m;
    expect(stdout).toMatch(replay);
    expect(stdout).toMatch(/^ {2}- overlap: /m);
    expect(stdout).toMatch(/^spec: \{"seed":/m);
    // The failing schedule is printed as found, before shrinking (which can take long).
    expect(stdout).toMatch(
      /^found \(shrinking now\):\n {2}- overlap: .*\nunshrunk spec: \{"seed":/m,
    );
    expect(stdout.indexOf("unshrunk spec: ")).toBeLessThan(stdout.indexOf("\nspec: "));
    expect(status).toBe(1);
    // The printed command replays exactly that schedule: one run, the same failure.
    const path = stdout.match(replay)?.[1] ?? "";
    const again = run("--seed", "4", "--path", path, "--mutant", "a-extend-shortens");
    expect(again.stdout).toMatch(/^violations: 1 bugs;/m);
    expect(again.stdout).toContain(stdout.slice(stdout.lastIndexOf("\nspec: ")).trim());
  }, 240_000); // two CLI runs of up to 120 s each on a loaded machine

  it("rejects bad arguments with the usage line and exit code 2", () => {
    for (const args of [["--schedules", "many"], ["--mutant", "nope"], ["--bogus"]]) {
      const { status, stderr } = run(...args);
      expect(stderr).toContain("usage: npm run sim -- --schedules N [--seed S]");
      expect(status).toBe(2);
    }
  });
});
