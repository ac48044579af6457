import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { baseEnv, countingEnv, httpPort, kafkaEnv, type ConfigOf } from '@banstream/platform';

const ms = (min: number, max: number, fallback: number, what: string) =>
  Type.Integer({ minimum: min, maximum: max, default: fallback, expected: `milliseconds from ${min} to ${max} (${what})` });
const positive = (fallback: number, what: string, min = 0) =>
  Type.Number({ exclusiveMinimum: min, default: fallback, expected: `a number above ${min} (${what})` });
const CODE = '[A-Z]{2}(-[A-Z0-9]{1,3})?';
const OVERRIDE = `${CODE}:(ratio|z|minRate)=[0-9.]+(,(ratio|z|minRate)=[0-9.]+)*`;
const ZONE = `${CODE}=[A-Za-z][A-Za-z0-9_+/-]*`;

/** Geographic alerting (README "Geographic alerting"). */
const geoEnv = {
  GEO_ALERT_ENABLED: Type.Boolean({ default: true, expected: 'true or false' }),
  GEO_ALERT_RATIO: positive(3, 'current rate over the baseline mean', 1),
  GEO_ALERT_Z: positive(5, 'z-score: standard deviations above the baseline mean'),
  GEO_ALERT_MIN_RATE: Type.Number({ minimum: 0, default: 1, expected: 'requests per second, 0 or more (least volume an alert needs)' }),
  GEO_ALERT_OVERRIDES: Type.String({ pattern: `^(${OVERRIDE}(;${OVERRIDE})*)?$`, default: '', expected: 'CODE:key=value,…;… with keys ratio, z, minRate, e.g. US:minRate=50;FR-IDF:ratio=4,z=6' }),
  GEO_ALERT_WARMUP_SAMPLES: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 30, expected: 'a count of samples from 1 (one sample per geo window)' }),
  GEO_ALERT_RESOLVE_MS: ms(0, 86_400_000, 120_000, 'event time the rate must stay back to normal before an alert resolves'),
  GEO_ALERT_COOLDOWN_MS: ms(0, 604_800_000, 900_000, 'event time after a resolved alert during which the same code does not alert again'),
  GEO_BASELINE_ALPHA: Type.Number({ exclusiveMinimum: 0, maximum: 1, default: 0.01, expected: 'a weight above 0, at most 1, for each new sample' }),
  GEO_BASELINE_FLUSH_MS: ms(100, 3_600_000, 10_000, 'least time between two writes of one subject baseline'),
  GEO_TIME_ZONES: Type.String({ pattern: `^(${ZONE}(,${ZONE})*)?$`, default: '', expected: 'CODE=Area/City,… e.g. FR=Europe/Paris,US=America/New_York' }),
  GEO_DEFAULT_TIME_ZONE: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_+/-]*$', default: 'UTC', expected: 'an IANA time zone such as UTC or Europe/Paris' }),
  GEO_ALERT_WEBHOOK_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$', expected: 'an http:// or https:// URL (Slack incoming webhooks work)' })),
  GEO_ALERT_WEBHOOK_SECRET: Type.Optional(Type.String({ minLength: 16, expected: 'at least 16 characters, to sign webhook bodies' })),
  GEO_ALERT_WEBHOOK_TIMEOUT_MS: ms(100, 120_000, 5_000, 'bound on one webhook request'),
  GEO_ALERT_WEBHOOK_RETRIES: Type.Integer({ minimum: 0, maximum: 30, default: 8, expected: 'retries from 0 to 30 after a failed webhook request' }),
  GEO_ALERT_WEBHOOK_BACKOFF_MS: ms(1, 60_000, 1_000, 'wait before the first webhook retry; doubles each time, at most a minute'),
};

/** Every variable the aggregator reads; README "Configuration" lists them. */
export const aggregatorEnv = {
  ...baseEnv,
  ...kafkaEnv,
  HTTP_PORT: httpPort(8081),
  /** Instances with the same group share the events topic. */
  AGGREGATOR_GROUP_ID: Type.String({ pattern: '^[A-Za-z0-9._-]+$', default: 'banstream-aggregator', expected: 'letters, digits, dot, dash or underscore' }),
  ...countingEnv,
  AGGREGATOR_HOT_SHARE: Type.Number({ minimum: 0, maximum: 1, default: 0.5, expected: 'a share from 0 to 1 of a policy threshold; counts at or above it are published' }),
  AGGREGATOR_COUNT_INTERVAL_MS: ms(10, 60_000, 250, 'least time between two publications of one subject count'),
  AGGREGATOR_TICK_MS: ms(5, 10_000, 50, 'how often counts, cool-downs and ban expiries are published'),
  AGGREGATOR_GEO_WINDOW_MS: ms(1_000, 86_400_000, 60_000, 'window of the per-country and per-region counts'),
  AGGREGATOR_SESSION_TIMEOUT_MS: ms(6_000, 300_000, 10_000, 'how soon the group notices a dead instance'),
  /** Above 1, the process supervises that many aggregator processes, each a member of the groups (README "Using every core"). */
  AGGREGATOR_WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 1, expected: 'worker processes from 1 to 64 (one per core uses the whole machine)' }),
  AGGREGATOR_FETCH_KB_PER_PARTITION: Type.Integer({ minimum: 64, maximum: 65_536, default: 1_024, expected: 'KiB from 64 to 65536 (most events input one fetch takes per partition)' }),
  /** A 1 MiB record of a few thousand events takes milliseconds; a legit 4 MiB fetch fits many times over. */
  AGGREGATOR_RECORD_BUDGET_MS: ms(10, 600_000, 5_000, 'longest one input record may be in hand: past it the worker is killed and the record dead-lettered unhandled'),
  AGGREGATOR_PUBLISH_STUCK_MS: ms(1_000, 3_600_000, 30_000, 'a publication to Kafka failing for longer makes /readyz report not ready'),
  /** Unset: <tmpdir>/banstream-aggregator-<uid>. Must be this user's own and not writable by others: a trap skips a record. */
  AGGREGATOR_STATE_DIR: Type.Optional(Type.String({ minLength: 1, expected: 'a directory path (records a worker stalled on are kept there)' })),
  ...geoEnv,
};
export type AggregatorConfig = ConfigOf<typeof aggregatorEnv>;

/** Where the watchdog keeps the records a worker stalled on: AGGREGATOR_STATE_DIR, or this user's own directory under the system's temporary one. */
export function stateDirOf(config: Pick<AggregatorConfig, 'AGGREGATOR_STATE_DIR'>): string {
  return config.AGGREGATOR_STATE_DIR ?? join(tmpdir(), `banstream-aggregator-${process.getuid?.() ?? 'user'}`);
}
