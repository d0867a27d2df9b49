/**
 * Invocations that `withLock` answered with its `onBusy` value: whatever that value is — a 423, a
 * 200 with a "try later" body, a bare string — it says "not now", so a `withIdempotency` around it
 * never keeps it and the retry runs the handler. The Hono adapter marks its `lock()` answers the
 * same way (`../hono/transient.ts`).
 *
 * @module
 */

/** Answers given by `onBusy`, by identity (an object result, the usual HTTP shape). */
const answers = new WeakSet<object>();
/**
 * The last `onBusy` answer per invocation context, for a value that cannot be marked by identity
 * (a string or number result); read once, right after the wrapped handler returned.
 */
const primitives = new WeakMap<object, unknown>();

const isObject = (value: unknown): value is object =>
  (typeof value === "object" && value !== null) || typeof value === "function";

/**
 * Mark `answer` as `withLock`'s busy answer to the invocation of `context`, and return it.
 *
 * @example
 * return markLockAnswer(context, await onBusy(event, context, error));
 */
export function markLockAnswer<T>(context: unknown, answer: T): T {
  if (isObject(answer)) answers.add(answer);
  else if (isObject(context)) primitives.set(context, answer);
  return answer;
}

/**
 * Forget a mark a previous invocation of `context` left (a test or an app may reuse one context
 * object): called before the wrapped handler runs.
 *
 * @example
 * clearLockAnswer(context);
 */
export function clearLockAnswer(context: unknown): void {
  if (isObject(context)) primitives.delete(context);
}

/**
 * Whether `result`, just returned by a handler given `context`, is a `withLock` busy answer.
 *
 * @example
 * const transient = isLockAnswer(context, result);
 */
export function isLockAnswer(context: unknown, result: unknown): boolean {
  if (isObject(result)) return answers.has(result);
  if (!isObject(context) || !primitives.has(context)) return false;
  const marked = primitives.get(context);
  primitives.delete(context);
  return Object.is(marked, result);
}
