import { TransportError } from "../errors";

/**
 * Drop anything that could carry a secret from a client error message. Besides our own request
 * body, a reply's body excerpt can echo the request (debugging proxies, some gateways' error
 * pages), so bearer credentials and every long token-like run of characters are masked too.
 */
export function sanitize(message: string): string {
  // @upstash/redis appends ", command was: <JSON body>" to server errors: the body holds our
  // lock token in ARGV, so cut it off.
  const cut = message.split(", command was:")[0] ?? message;
  return cut
    .replace(/([?&]_token=)[^&\s"']*/gi, "$1***")
    .replace(/(bearer)\s+[^\s"',;]+/gi, "$1 ***")
    .replace(/[A-Za-z0-9_\-+/=]{24,}/g, "***")
    .slice(0, 300);
}

function nameOf(error: unknown): string {
  return typeof error === "object" && error !== null && typeof (error as Error).name === "string"
    ? (error as Error).name
    : typeof error;
}

function messageOf(error: unknown): string {
  if (typeof error === "object" && error !== null && typeof (error as Error).message === "string") {
    return (error as Error).message;
  }
  return String(error);
}

/** The low-level code (ECONNRESET, UND_ERR_SOCKET, ...) fetch implementations put in `cause`. */
function codeOf(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** The message of `cause` (undici's "bad port", …), sanitized; `undefined` when there is none. */
function causeMessageOf(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (typeof cause !== "object" || cause === null) return undefined;
  const text = sanitize(messageOf(cause)).trim();
  return text === "" ? undefined : text;
}

/**
 * The REST servers' answers to a wrong, missing or under-privileged token (HTTP 401/403):
 * Upstash's `WRONGPASS invalid or missing auth token` and `NOPERM …`, `Unauthorized` (this
 * project's dev endpoint, SRH, most emulators), `Invalid token` and `Missing/Invalid
 * authorization header` (SRH). `@upstash/redis` does not expose the HTTP status, so the body's
 * text is all there is to go by (https://upstash.com/docs/redis/features/restapi, "HTTP Codes").
 */
const REJECTED_TOKEN = /^(WRONGPASS|Unauthorized|Invalid token|Missing\/Invalid authorization)/i;
const NO_PERMISSION = /^NOPERM\b/i;

/** The words for a token the node refused, or `undefined` for any other error reply. */
function authProblem(message: string): string | undefined {
  if (REJECTED_TOKEN.test(message)) {
    return `rejected the token (HTTP 401 ${message.slice(0, 60)}): check this node's token`;
  }
  if (NO_PERMISSION.test(message)) {
    return `refused the command (HTTP 403 ${message.slice(0, 60)}): the token lacks permission`;
  }
  return undefined;
}

/**
 * Turn whatever a `Redis` call threw into a {@link TransportError} naming the node (index, host),
 * never the token. `timeoutMs` is set when our own per-request timer fired.
 */
export function classify(
  index: number,
  host: string,
  error: unknown,
  timeoutMs: number | undefined,
): TransportError {
  if (timeoutMs !== undefined) {
    return new TransportError(index, host, "timeout", `no answer within ${timeoutMs} ms`);
  }
  if (error instanceof TransportError) {
    return error;
  }
  const name = nameOf(error);
  const message = sanitize(messageOf(error));
  if (name === "UpstashJSONParseError") {
    // Non-JSON body (HTML error page, proxy text): the node is not speaking the REST protocol.
    return new TransportError(index, host, "reply", `unexpected reply (${message})`);
  }
  if (name === "UpstashError") {
    // The node answered with an error (HTTP 4xx/5xx with {"error"}, or an inline error). The
    // original message embeds the command body, so only a sanitized copy goes into `cause`.
    const cause = new Error(message);
    cause.name = name;
    const auth = authProblem(message);
    if (auth !== undefined) return new TransportError(index, host, "auth", auth, { cause });
    return new TransportError(index, host, "server", `error reply: ${message}`, { cause });
  }
  if (
    name === "TypeError" &&
    /did not return a result|is not a function|Cannot read prop/.test(message)
  ) {
    // The client choked on the reply's shape ("did not return a result", or `res.map is not a
    // function` for a 200 {"error"} on /pipeline): a protocol problem, not worth a re-send.
    return new TransportError(index, host, "reply", `unexpected reply (${message})`);
  }
  if (name === "TimeoutError") {
    // A timeout imposed by a user-supplied client's own signal.
    return new TransportError(index, host, "timeout", message, { cause: error });
  }
  // fetch says only "fetch failed"; why (ECONNREFUSED, "bad port", a DNS failure) is its cause.
  const code = codeOf(error);
  const why = code ?? causeMessageOf(error);
  const detail = why === undefined ? `${name}: ${message}` : `${message}: ${why}`;
  return new TransportError(index, host, "network", `unreachable (${detail})`, { cause: error });
}
