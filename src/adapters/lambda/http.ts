/**
 * The HTTP events and results of AWS Lambda behind API Gateway (REST API: payload 1.0; HTTP API:
 * 1.0 or 2.0), Function URLs (2.0) and Application Load Balancers (1.0's shape, with or without
 * multi-value headers), structurally: no dependency on `@types/aws-lambda`, whose
 * `APIGatewayProxyEvent(V2)` and results fit these.
 *
 * @module
 */

/**
 * A payload 1.0 event (API Gateway REST API, an HTTP API set to 1.0, or an ALB; an ALB with
 * multi-value headers enabled sends only `multiValueHeaders` and
 * `multiValueQueryStringParameters`).
 */
export interface HttpEventV1 {
  readonly httpMethod: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string | undefined>> | null;
  readonly multiValueHeaders?: Readonly<Record<string, readonly string[] | undefined>> | null;
  readonly multiValueQueryStringParameters?: Readonly<
    Record<string, readonly string[] | undefined>
  > | null;
  readonly queryStringParameters?: Readonly<Record<string, string | undefined>> | null;
  readonly body?: string | null;
  readonly isBase64Encoded?: boolean;
}

/** A payload 2.0 event (API Gateway HTTP API, Lambda Function URL). */
export interface HttpEventV2 {
  readonly rawPath: string;
  readonly rawQueryString?: string;
  readonly headers?: Readonly<Record<string, string | undefined>>;
  readonly cookies?: readonly string[];
  readonly requestContext: {
    readonly http: { readonly method: string };
    readonly domainName?: string;
  };
  readonly body?: string | null;
  readonly isBase64Encoded?: boolean;
}

/** Either payload version. */
export type HttpEvent = HttpEventV1 | HttpEventV2;

/** A structured result (both versions); payload 2.0 also accepts a bare value (200, JSON). */
export interface HttpResult {
  statusCode: number;
  headers?: Record<string, string | number | boolean>;
  multiValueHeaders?: Record<string, (string | number | boolean)[]>;
  cookies?: string[];
  body?: string;
  isBase64Encoded?: boolean;
}

const isV2 = (event: HttpEvent): event is HttpEventV2 =>
  typeof (event as HttpEventV2).requestContext?.http?.method === "string";

/** Method, path with query, a header reader and the body bytes of an HTTP event. */
export function requestOf(event: HttpEvent): {
  method: string;
  path: string;
  /** The `Host` header, or a 2.0 event's `requestContext.domainName`. */
  host: string | undefined;
  header(name: string): string | undefined;
  body: Uint8Array;
} {
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (typeof value === "string") headers.set(name.toLowerCase(), value);
  }
  // Payload 1.0 may carry only multiValueHeaders (an ALB with multi-value headers on).
  const multi = "multiValueHeaders" in event ? event.multiValueHeaders : undefined;
  for (const [name, values] of Object.entries(multi ?? {})) {
    const lower = name.toLowerCase();
    if (headers.has(lower) || values === undefined || values.length === 0) continue;
    headers.set(lower, values.join(lower === "cookie" ? "; " : ", "));
  }
  let method: string;
  let path: string;
  if (isV2(event)) {
    method = event.requestContext.http.method;
    path = event.rawQueryString ? `${event.rawPath}?${event.rawQueryString}` : event.rawPath;
    if (event.cookies !== undefined && event.cookies.length > 0 && !headers.has("cookie")) {
      headers.set("cookie", event.cookies.join("; "));
    }
  } else {
    method = event.httpMethod;
    const query = new URLSearchParams();
    for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
      for (const value of values ?? []) query.append(name, value);
    }
    if (event.multiValueQueryStringParameters == null) {
      for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
        if (value !== undefined) query.append(name, value);
      }
    }
    const search = query.toString();
    path = search === "" ? event.path : `${event.path}?${search}`;
  }
  const raw = event.body ?? "";
  const body = event.isBase64Encoded
    ? Uint8Array.from(atob(raw), (c) => c.charCodeAt(0))
    : new TextEncoder().encode(raw);
  const host = headers.get("host") ?? (isV2(event) ? event.requestContext.domainName : undefined);
  return { method, path, host, header: (name) => headers.get(name.toLowerCase()), body };
}

/**
 * Whether results to `event` must carry their headers in `multiValueHeaders`: an ALB with
 * multi-value headers on ignores `headers`.
 */
export const wantsMultiValue = (event: HttpEvent): boolean =>
  !isV2(event) && event.headers == null && event.multiValueHeaders != null;

/** The structured form of a handler's result (a bare payload 2.0 value: 200, JSON). */
export function structured(result: unknown): HttpResult {
  const r = result as Partial<HttpResult> | null;
  if (typeof r === "object" && r !== null && typeof r.statusCode === "number")
    return r as HttpResult;
  const body = typeof result === "string" ? result : JSON.stringify(result);
  return { statusCode: 200, headers: { "content-type": "application/json" }, body };
}

/** A result's headers as name/value pairs (single- and multi-value), lower-case names. */
export function headersOf(result: HttpResult): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    pairs.push([name.toLowerCase(), String(value)]);
  }
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    for (const value of values) pairs.push([name.toLowerCase(), String(value)]);
  }
  return pairs;
}

/** A result's body bytes. */
export function bodyOf(result: HttpResult): Uint8Array {
  const raw = result.body ?? "";
  return result.isBase64Encoded
    ? Uint8Array.from(atob(raw), (c) => c.charCodeAt(0))
    : new TextEncoder().encode(raw);
}

/**
 * A result for `status`, `headers` and `body`: base64 when `base64` says so (as the first answer
 * was) or when the body is not UTF-8, else as text (a REST API returns base64 bodies verbatim
 * unless binary media types are configured), a leading BOM kept. A header given several times
 * keeps every value: in `multiValueHeaders` with `multiValue` (an ALB in that mode), else joined
 * with ", " (`set-cookie`, the one header that cannot be joined, is never stored).
 */
export function resultOf(
  status: number,
  headers: readonly (readonly [string, string])[],
  body: Uint8Array,
  { base64 = false, multiValue = false }: { base64?: boolean; multiValue?: boolean } = {},
): HttpResult {
  const values = new Map<string, string[]>();
  for (const [name, value] of headers) values.set(name, [...(values.get(name) ?? []), value]);
  const result: HttpResult = { statusCode: status };
  if (multiValue) result.multiValueHeaders = Object.fromEntries(values);
  else result.headers = Object.fromEntries([...values].map(([n, v]) => [n, v.join(", ")]));
  if (!base64) {
    try {
      const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
      return { ...result, body: text };
    } catch {
      // Not UTF-8: base64.
    }
  }
  let binary = "";
  for (const byte of body) binary += String.fromCharCode(byte);
  return { ...result, body: btoa(binary), isBase64Encoded: true };
}
