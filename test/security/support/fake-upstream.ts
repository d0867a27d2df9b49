/**
 * Tiny `node:http` servers that play a broken or hostile REST upstream: HTML pages, truncated JSON,
 * replies of the wrong shape, errors inside a 200, hangs, resets, an echo of the request. They are
 * the malformed upstream under test, not a mock of edgelock. Each records what it received (paths,
 * the lock tokens found in bodies, the Authorization headers) so tests can assert none of it leaks.
 *
 * @module
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** How the fake answers one request. */
export type Behaviour =
  | {
      readonly kind: "status";
      readonly status: number;
      readonly body: string;
      readonly type?: string;
    }
  /** Answer with `reply(parsedBody, path)` as JSON, status 200. */
  | { readonly kind: "json"; readonly reply: (body: unknown, path: string) => unknown }
  | { readonly kind: "hang" }
  | { readonly kind: "reset" }
  /** 502 HTML page that echoes the request line, headers and body (a debugging proxy). */
  | { readonly kind: "echo" };

/** A running fake upstream. */
export interface FakeUpstream {
  /** `http://127.0.0.1:<port>` (append a path to run several "nodes" on one server). */
  readonly url: string;
  /** Requests received (path, authorization header, body text). */
  readonly received: { path: string; authorization: string | undefined; body: string }[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function answer(behaviour: Behaviour, req: IncomingMessage, res: ServerResponse, body: string) {
  switch (behaviour.kind) {
    case "status":
      res.writeHead(behaviour.status, { "content-type": behaviour.type ?? "text/html" });
      res.end(behaviour.body);
      return;
    case "json": {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(behaviour.reply(parsed, req.url ?? "/")));
      return;
    }
    case "hang":
      res.once("close", () => req.socket.destroy());
      return;
    case "reset":
      req.socket.destroy();
      return;
    case "echo": {
      const headers = Object.entries(req.headers)
        .map(([k, v]) => `${k}: ${String(v)}`)
        .join("\n");
      res.writeHead(502, { "content-type": "text/html" });
      res.end(`<html><pre>${req.method} ${req.url}\n${headers}\n\n${body}</pre></html>`);
      return;
    }
  }
}

/**
 * Start a fake upstream on loopback with one behaviour for every request.
 *
 * @example
 * const fake = await startFakeUpstream({ kind: "status", status: 200, body: "<html>hi</html>" });
 * createLocks({ nodes: [{ url: fake.url, token: "t" }] });
 */
export async function startFakeUpstream(behaviour: Behaviour): Promise<FakeUpstream> {
  const received: FakeUpstream["received"] = [];
  const server: Server = createServer((req, res) => {
    readBody(req).then(
      (body) => {
        received.push({ path: req.url ?? "/", authorization: req.headers.authorization, body });
        answer(behaviour, req, res, body);
      },
      () => req.socket.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
