/**
 * HTTP plumbing of the dev endpoint: reading a capped body, writing JSON (or raw) replies with the
 * headers every reply carries (sync token, CORS), answering CORS preflights.
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from "node:http";

/** Headers a browser client may send (Upstash's set plus `Accept`). */
const ALLOWED_HEADERS = [
  "Authorization",
  "Content-Type",
  "Accept",
  "Upstash-Encoding",
  "Upstash-Response-Format",
  "Upstash-Telemetry-Runtime",
  "Upstash-Telemetry-Platform",
  "Upstash-Telemetry-Sdk",
  "Upstash-Telemetry-Retry",
  "upstash-sync-token",
].join(", ");

/** The request body, or `undefined` when it exceeded `maxBytes` (it is still read to the end). */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = Number(req.headers["content-length"] ?? 0) > maxBytes;
    req.on("data", (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > maxBytes) {
        tooLarge = true;
        chunks.length = 0;
      } else {
        chunks.push(chunk);
      }
    });
    // Oversize bodies are drained rather than cut off: closing the socket mid-upload would make
    // the client see a network error (and retry) instead of the 413.
    req.on("end", () => {
      if (tooLarge) resolve(undefined);
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
    req.on("error", reject);
  });
}

/**
 * The headers every reply carries, JSON or SSE: a fresh sync token, and CORS for browser clients
 * (which may read the token).
 */
export function replyHeaders(syncToken: string): string[] {
  return [
    "upstash-sync-token",
    syncToken,
    "access-control-allow-origin",
    "*",
    "access-control-expose-headers",
    "upstash-sync-token",
  ];
}

/** Writes a complete reply unless the client is already gone. */
export function send(
  res: ServerResponse,
  status: number,
  body: string,
  syncToken: string,
  contentType = "application/json",
): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, [
    "content-type",
    contentType,
    "content-length",
    String(Buffer.byteLength(body)),
    ...replyHeaders(syncToken),
  ]);
  res.end(body);
}

/** 204 answer to a CORS preflight; no token needed, browsers send none on preflights. */
export function sendPreflight(res: ServerResponse): void {
  res.writeHead(204, [
    "access-control-allow-origin",
    "*",
    "access-control-allow-methods",
    "POST, PUT, GET, DELETE, OPTIONS",
    "access-control-allow-headers",
    ALLOWED_HEADERS,
    "access-control-expose-headers",
    "upstash-sync-token",
    "access-control-max-age",
    "86400",
  ]);
  res.end();
}

/** Destroys the connection with a TCP RST where the platform allows it (a "connection reset"). */
export function resetConnection(req: IncomingMessage): void {
  const socket = req.socket;
  if (typeof socket.resetAndDestroy === "function") socket.resetAndDestroy();
  else socket.destroy();
}
