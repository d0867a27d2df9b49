/**
 * Invocations that `withLock` answered with its `onBusy` value: whatever that value is — a 423, a
 * 200 with a "try later" body, a bare string — it says "not now", so a `withIdempotency` around it
 * never keeps it and the retry runs the handler. The mark is on the invocation (its `context`
 * object), not on the value, so code between the two wrappers may return a copy of the answer
 * (say, with a CORS header added) and it is still never kept; the Hono adapter marks its `lock()`
 * answers on the request's context the same way (`../hono/transient.ts`).
 *
 * @module
 */

/** Invocation contexts whose `withLock` answered busy since `withIdempotency` last cleared them. */
const busyInvocations = new WeakSet<object>();
/**
 * Fallback for an invocation without a context object (a handler called by hand with none):
 * the `onBusy` answers themselves, by identity, so only that very value is recognised.
 */
const answers = new WeakSet<object>();

const isObject = (value: unknown): value is object =>
  (typeof value === "object" && value !== null) || typeof value === "function";

/**
 * Mark the invocation of `context` as answered busy by `withLock`, and return `answer`
 * unchanged. Without a context object, an object `answer` is marked by identity instead.
 *
 * @example
 * return markLockAnswer(context, await onBusy(event, context, error));
 */
export function markLockAnswer<T>(context: unknown, answer: T): T {
  if (isObject(context)) busyInvocations.add(context);
  else if (isObject(answer)) answers.add(answer);
  return answer;
}

/**
 * Forget a mark a previous invocation of `context` left (a Lambda runtime gives each invocation
 * its own context, but a test or an app may reuse one): called before the wrapped handler runs.
 *
 * @example
 * clearLockAnswer(context);
 */
export function clearLockAnswer(context: unknown): void {
  if (isObject(context)) busyInvocations.delete(context);
}

/**
 * Whether a `withLock` inside answered busy to the invocation of `context` since the last
 * {@link clearLockAnswer} — whatever the handler then returned (`result`: the answer, a copy of
 * it, anything). Without a context object: whether `result` is that very answer.
 *
 * @example
 * const transient = isLockAnswer(context, result);
 */
export function isLockAnswer(context: unknown, result: unknown): boolean {
  if (isObject(context)) return busyInvocations.has(context);
  return isObject(result) && answers.has(result);
}
