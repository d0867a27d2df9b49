/**
 * Helpers for the Lambda tests: a fake invocation context whose `getRemainingTimeInMillis()` counts
 * down on the monotonic clock, hand-built API Gateway v2 / Function URL events, and small
 * synchronisation utilities.
 *
 * @module
 */
import type { LambdaEvent } from "hono/aws-lambda";
import type { LambdaContext } from "../../src/adapters/lambda/index";

/** The payload v2 member of the events `handle(app)` accepts (hono declares its own types). */
export type HttpEventV2 = Extract<LambdaEvent, { rawPath: string }>;

/** A fake context plus the monotonic instant its deadline falls on. */
export interface FakeContext extends LambdaContext {
  /** `performance.now()` value at which `getRemainingTimeInMillis()` reaches 0. */
  readonly deadline: number;
  /** `performance.now()` value when the context was created (the invocation started). */
  readonly startedAt: number;
}

/**
 * A context as Lambda would pass it to an invocation with `remainingMs` left: the remaining time
 * counts down from now and is reported in whole ms, never below 0 (as the real runtime does).
 */
export function fakeContext(
  remainingMs: number,
  requestId: string = crypto.randomUUID(),
): FakeContext {
  const startedAt = performance.now();
  const deadline = startedAt + remainingMs;
  return {
    startedAt,
    deadline,
    callbackWaitsForEmptyEventLoop: true,
    functionName: "edgelock-test",
    functionVersion: "$LATEST",
    invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:edgelock-test",
    memoryLimitInMB: "128",
    awsRequestId: requestId,
    logGroupName: "/aws/lambda/edgelock-test",
    logStreamName: "2026/01/01/[$LATEST]0123456789abcdef",
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(deadline - performance.now())),
  };
}

/** A Function URL / API Gateway HTTP API (payload v2) event for `method path`. */
export function httpEventV2(
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; query?: string } = {},
): HttpEventV2 {
  const now = Date.now();
  const body = options.body === undefined ? null : JSON.stringify(options.body);
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: path,
    rawQueryString: options.query ?? "",
    headers: {
      host: "abcdefghij.lambda-url.us-east-1.on.aws",
      "user-agent": "edgelock-test",
      ...(body === null ? {} : { "content-type": "application/json" }),
      ...options.headers,
    },
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: "123456789012",
      apiId: "abcdefghij",
      authentication: null,
      authorizer: {},
      domainName: "abcdefghij.lambda-url.us-east-1.on.aws",
      domainPrefix: "abcdefghij",
      http: {
        method,
        path,
        protocol: "HTTP/1.1",
        sourceIp: "203.0.113.7",
        userAgent: "edgelock-test",
      },
      requestId: crypto.randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
  };
}

/** A promise with its `resolve` exposed: lets a test hold a handler inside its lock. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Resolve when `signal` aborts, with `performance.now()` at that moment. */
export function aborted(signal: AbortSignal): Promise<number> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(performance.now());
    else signal.addEventListener("abort", () => resolve(performance.now()), { once: true });
  });
}
