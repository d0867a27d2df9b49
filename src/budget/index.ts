/**
 * Execution budget: a monotonic deadline plus an optional allowance of node requests, used to size
 * every lock TTL (`min(lease, remaining + margin)`) and to bound waiting and retries.
 *
 * @module
 */
export { type Budget, type BudgetOptions, createBudget, DEFAULT_MARGIN } from "./budget";
export {
  budget,
  type LambdaContextLike,
  type WorkersFetchBudgetOptions,
  type WorkersScheduledBudgetOptions,
} from "./factories";
