/**
 * Every error banstream raises carries a stable code (for metrics, logs and API
 * bodies), an optional cause, and whether retrying the same operation can help.
 */
export const ERROR_CODES = [
  'CONFIG_INVALID',
  'SCHEMA_BAD_MAGIC',
  'SCHEMA_TRUNCATED',
  'SCHEMA_UNKNOWN_FINGERPRINT',
  'SCHEMA_INVALID_VALUE',
  'SCHEMA_INCOMPATIBLE',
  'KAFKA_UNAVAILABLE',
  'KAFKA_TIMEOUT',
  'REDIS_UNAVAILABLE',
  'REDIS_TIMEOUT',
  'SHUTDOWN_TIMEOUT',
  'SUBJECT_INVALID_IP',
  'SUBJECT_INVALID_CIDR',
  'SUBJECT_INVALID_DIMENSION',
  'SUBJECT_INVALID_ATTRIBUTE',
  'SUBJECT_INVALID',
  'POLICY_INVALID',
  'WINDOW_INVALID_ARGUMENT',
  'WINDOW_SNAPSHOT_CORRUPT',
  'WINDOW_CAPACITY_EXCEEDED',
  'EVENT_TIME_OUT_OF_RANGE',
  'WEBHOOK_REFUSED',
  'WEBHOOK_UNAVAILABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface BanstreamErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  /** Structured facts for logs and API bodies; never secrets. */
  details?: Record<string, unknown>;
}

export class BanstreamError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: BanstreamErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BanstreamError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
  }
}

export function isBanstreamError(err: unknown, code?: ErrorCode): err is BanstreamError {
  return err instanceof BanstreamError && (code === undefined || err.code === code);
}
