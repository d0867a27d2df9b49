/**
 * The dedupe key of a scheduled Lambda invocation: the invoked function (the job), the trigger's
 * identity and its *planned* time, which every duplicate delivery and every retry of one
 * occurrence share.
 *
 * @module
 */

/**
 * Fields of an EventBridge Scheduler target `Input` holding `<aws.scheduler.schedule-arn>`
 * (camelCase first, then the context attribute's own kebab-case name).
 */
export const SCHEDULE_ARN_FIELDS = ["scheduleArn", "schedule-arn"] as const;
/** Fields of a Scheduler `Input` holding `<aws.scheduler.scheduled-time>`. */
export const SCHEDULED_TIME_FIELDS = ["scheduledTime", "scheduled-time"] as const;

/**
 * An EventBridge scheduled rule event (the parts the key uses), as Lambda receives it.
 *
 * @example
 * { "detail-type": "Scheduled Event", source: "aws.events", time: "2026-01-01T03:00:00Z",
 *   resources: ["arn:aws:events:us-east-1:123456789012:rule/daily-report"], id: "…", detail: {} }
 */
export interface ScheduledRuleEvent {
  readonly "detail-type": "Scheduled Event";
  readonly source: "aws.events";
  /** The occurrence's time (ISO 8601, UTC), the same on every delivery of it. */
  readonly time: string;
  /** `[ruleArn]`. */
  readonly resources: readonly string[];
}

/**
 * The `Input` of an EventBridge Scheduler target that `dedupeScheduled` can key on. Set it on the
 * schedule's target with the context attributes:
 * `{"scheduleArn":"<aws.scheduler.schedule-arn>","scheduledTime":"<aws.scheduler.scheduled-time>"}`
 * (the kebab-case names `schedule-arn` / `scheduled-time` are read too). Never key on
 * `<aws.scheduler.execution-id>`: it differs per attempt.
 *
 * @example
 * { scheduleArn: "arn:aws:scheduler:us-east-1:123456789012:schedule/default/nightly",
 *   scheduledTime: "2026-01-01T03:00:00Z", executionId: "…", attemptNumber: "1" }
 */
export interface SchedulerInput {
  readonly scheduleArn?: string;
  readonly scheduledTime?: string;
  readonly "schedule-arn"?: string;
  readonly "scheduled-time"?: string;
}

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value : undefined;

function firstField(event: Record<string, unknown>, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = text(event[name]);
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * The key of one scheduled occurrence of one job, or `undefined` when the event is neither shape.
 * The job is the invoked function as the trigger's target names it (`invokedFunctionArn`: the
 * function's ARN, with the alias or version the target gives, the same on every delivery and retry
 * of one target, also when an alias moves to a new version), so two targets of one rule, or two
 * functions on one schedule, each run their own job:
 * - EventBridge rule (`detail-type` "Scheduled Event", `source` "aws.events"):
 *   `scheduled:${invokedFunctionArn}:${resources[0]}:${time}`;
 * - EventBridge Scheduler input: `scheduled:${invokedFunctionArn}:${scheduleArn}:${scheduledTime}`
 *   (either spelling of the fields, see {@link SchedulerInput}).
 *
 * @param event the invocation's event
 * @param job the invocation's identity: the Lambda context's `invokedFunctionArn`
 * @example
 * scheduledKey({ "detail-type": "Scheduled Event", source: "aws.events", time: "2026-01-01T03:00:00Z",
 *   resources: ["arn:aws:events:us-east-1:1:rule/r"] }, "arn:aws:lambda:us-east-1:1:function:report")
 * // "scheduled:arn:aws:lambda:us-east-1:1:function:report:arn:aws:events:us-east-1:1:rule/r:2026-01-01T03:00:00Z"
 */
export function scheduledKey(event: unknown, job: string): string | undefined {
  if (typeof event !== "object" || event === null || Array.isArray(event)) return undefined;
  if (text(job) === undefined) return undefined;
  const fields = event as Record<string, unknown>;
  if (fields["detail-type"] === "Scheduled Event" && fields.source === "aws.events") {
    const resources = fields.resources;
    const rule = Array.isArray(resources) ? text(resources[0]) : undefined;
    const time = text(fields.time);
    return rule === undefined || time === undefined
      ? undefined
      : `scheduled:${job}:${rule}:${time}`;
  }
  const arn = firstField(fields, SCHEDULE_ARN_FIELDS);
  const time = firstField(fields, SCHEDULED_TIME_FIELDS);
  return arn === undefined || time === undefined ? undefined : `scheduled:${job}:${arn}:${time}`;
}
