import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isTransportError, type TransportError } from "../../src/errors";
import { createNode } from "../../src/node";
import { evalScript, RELEASE } from "../../src/scripts";
import { eventually } from "./helpers";

/**
 * A plain HTTP server standing in for a node that never answers, to observe what the client does
 * on the wire (the dev endpoint's hang fault cannot tell whether the client hung up).
 */
let server: Server;
let url: string;
const closedAfter: number[] = [];
let received = 0;
const bodies: string[] = [];
const authorizations: (string | undefined)[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    received += 1;
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => bodies.push(body));
    authorizations.push(req.headers.authorization);
    // never respond; record when the client gives up
    res.on("close", () => closedAfter.push(performance.now() - started));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("node built from { url, token }", () => {
  it("aborts the fetch itself on timeout, sends one attempt, reports a timeout", async () => {
    const token = "rest-token-never-shown";
    const { node } = createNode({ url, token }, 4);
    const before = closedAfter.length;
    const receivedBefore = received;
    const error = (await evalScript(node, RELEASE, ["k", "k:fence"], ["t"], {
      timeoutMs: 300,
    }).catch((e: unknown) => e)) as TransportError;
    expect(isTransportError(error)).toBe(true);
    expect([error.kind, error.node, error.host]).toEqual(["timeout", 4, new URL(url).host]);
    expect(error.message).not.toContain(token);
    // sent exactly once, and cancelled on the wire (not left running)
    expect(received - receivedBefore).toBe(1);
    await eventually(() => closedAfter.length - before === 1);
    expect(bodies.at(-1)).toMatch(/^\["eval",/); // first use: EVAL with the source
    expect(authorizations.at(-1)).toBe(`Bearer ${token}`);
  });
});
