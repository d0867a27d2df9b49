/**
 * The log line of a skipped scheduled trigger: what `dedupeScheduled` (Workers and Lambda) writes
 * with `console.info` when the app gives no `onSkip`, so that a deduplicated trigger is visible in
 * `wrangler dev`, `wrangler tail` and CloudWatch without any setup. It names the dedupe key (the
 * job's name or function ARN, the cron or schedule, the scheduled time: never a token) and why.
 *
 * @param key the dedupe key (without the manager's prefix)
 * @param reason `"done"`: the occurrence already ran; `"running"`: another run holds it now
 * @param retryAfter the done marker's or the running holder's remaining time, ms
 * @example
 * skipLine("scheduled:digest:0 3 * * *:1767225600000", "done", 86_123_456);
 * // 'edgelock: skipped scheduled job "scheduled:digest:0 3 * * *:1767225600000": it already ran (its done marker stays 86123 s more)'
 */
export function skipLine(key: string, reason: "done" | "running", retryAfter: number): string {
  const seconds = Math.ceil(retryAfter / 1000);
  const why =
    reason === "done"
      ? `it already ran (its done marker stays ${seconds} s more)`
      : `another run holds it (for up to ${seconds} s more)`;
  return `edgelock: skipped scheduled job ${JSON.stringify(key)}: ${why}`;
}

/**
 * Write {@link skipLine} with `console.info` (the default when `dedupeScheduled` has no `onSkip`).
 *
 * @example
 * logSkip("scheduled:digest:0 3 * * *:1767225600000", "running", 9_500);
 */
export function logSkip(key: string, reason: "done" | "running", retryAfter: number): void {
  console.info(skipLine(key, reason, retryAfter));
}
