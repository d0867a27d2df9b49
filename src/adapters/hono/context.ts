/**
 * What the Hono adapters read from a request's context: the Workers execution context, the AWS
 * Lambda context (hono's adapter), and the budget a request gets by default from either.
 *
 * @module
 */
import type { Context, ExecutionContext } from "hono";
import { type Budget, budget as budgets, type LambdaContextLike } from "../../budget";

/** `c.executionCtx`, which throws when absent (Node, Lambda, `app.request()` without a ctx). */
export function executionCtxOf(c: Context): ExecutionContext | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

/** The AWS Lambda context of hono's Lambda adapter, if any. */
export function lambdaContextOf(c: Context): LambdaContextLike | undefined {
  const env = c.env as Record<string, unknown> | undefined;
  // `handle(app)` passes `lambdaContext`; hono's `streamHandle` passes the same object as `context`.
  for (const candidate of [env?.lambdaContext, env?.context]) {
    const fn = (candidate as Partial<LambdaContextLike> | undefined)?.getRemainingTimeInMillis;
    if (typeof fn === "function") return candidate as LambdaContextLike;
  }
  return undefined;
}

/**
 * The default budget of a request: `budget.lambda` on hono's AWS Lambda adapter,
 * `budget.workersFetch()` with an execution context (Workers), otherwise none.
 */
export function defaultBudget(c: Context): Budget | undefined {
  const lambdaContext = lambdaContextOf(c);
  if (lambdaContext !== undefined) return budgets.lambda(lambdaContext);
  if (executionCtxOf(c) !== undefined) return budgets.workersFetch();
  return undefined;
}
