// `--nodes <file>` of the operator commands: both shapes, and errors that name the file and the
// entry, not an environment variable, and never quote a token.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadNodes } from "../../src/dev/cli/operator";

const dir = mkdtempSync(join(tmpdir(), "edgelock-nodes-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = "AXXXsecret-token-value-1234567890";
const NODE = { url: "http://127.0.0.1:40001", token: SECRET };

/** Writes `content` to a fresh file and loads it; the error message when that throws. */
function load(content: string): unknown {
  const file = join(dir, `${crypto.randomUUID()}.json`);
  writeFileSync(file, content);
  try {
    return loadNodes(file, {});
  } catch (error) {
    return (error as Error).message.replace(file, "nodes.json");
  }
}

describe("edgelock inspect --nodes <file>", () => {
  it('reads […] and {"nodes":[…]} (edgelock dev --json output)', () => {
    expect(load(JSON.stringify([NODE]))).toEqual([NODE]);
    expect(load(JSON.stringify({ nodes: [NODE, NODE] }))).toEqual([NODE, NODE]);
  });

  it.each([
    [
      JSON.stringify({ nodes: [{ ...NODE, url: "ftp://x" }] }),
      "--nodes: nodes.json: nodes[0].url: expected an http(s) URL string",
    ],
    [
      JSON.stringify([NODE, { url: NODE.url }]),
      "--nodes: nodes.json: nodes[1].token: expected a non-empty string",
    ],
    [JSON.stringify([SECRET]), '--nodes: nodes.json: nodes[0]: expected an object {"url","token"}'],
    [
      JSON.stringify({ nodes: [] }),
      '--nodes: nodes.json: expected at least one node, as JSON [{"url","token"}, …] or {"nodes":[{"url","token"}, …]}',
    ],
    [
      "null",
      '--nodes: nodes.json: expected at least one node, as JSON [{"url","token"}, …] or {"nodes":[{"url","token"}, …]}',
    ],
  ])("%s → %s", (content, message) => {
    expect(load(content)).toBe(message);
  });
});
