/**
 * The one catalogue of banstream's error codes. Every code is stable (for metrics,
 * logs and API bodies) and has the HTTP status and title it is answered with when it
 * reaches an HTTP caller (problem.ts writes the body). Codes a service raises inside
 * (BanstreamError) and codes an API answers with live in the same table, so a code
 * means one thing and has one status everywhere.
 */
const STATUS_TITLES = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
} as const;
export type ProblemStatus = keyof typeof STATUS_TITLES;

export interface ErrorEntry {
  status: ProblemStatus;
  /** The status's reason phrase: RFC 9457 asks for it as the title of an `about:blank` problem. */
  title: string;
}

const entry = (status: ProblemStatus): ErrorEntry => ({ status, title: STATUS_TITLES[status] });

export const ERRORS = {
  // Raised inside services (BanstreamError); the status is what an API answers if one reaches it.
  CONFIG_INVALID: entry(500),
  SCHEMA_BAD_MAGIC: entry(400),
  SCHEMA_TRUNCATED: entry(400),
  SCHEMA_UNKNOWN_FINGERPRINT: entry(400),
  SCHEMA_INVALID_VALUE: entry(400),
  SCHEMA_INCOMPATIBLE: entry(400),
  /** Retryable: Kafka did not take the change, nothing was changed. */
  KAFKA_UNAVAILABLE: entry(503),
  KAFKA_TIMEOUT: entry(503),
  /** Not retryable: Kafka refused this principal an operation (an ACL) or its login; the message names both. */
  KAFKA_ACCESS_DENIED: entry(503),
  /** A record batch read from Kafka that this client cannot read (Snappy, LZ4 or ZSTD; gzip over its bound; corrupt): skipped whole, dead-lettered as one record. */
  KAFKA_BATCH_UNREADABLE: entry(400),
  REDIS_UNAVAILABLE: entry(503),
  REDIS_TIMEOUT: entry(503),
  SHUTDOWN_TIMEOUT: entry(503),
  SUBJECT_INVALID_IP: entry(400),
  SUBJECT_INVALID_CIDR: entry(400),
  SUBJECT_INVALID_DIMENSION: entry(400),
  SUBJECT_INVALID_ATTRIBUTE: entry(400),
  SUBJECT_INVALID: entry(400),
  POLICY_INVALID: entry(400),
  WINDOW_INVALID_ARGUMENT: entry(500),
  WINDOW_CAPACITY_EXCEEDED: entry(503),
  EVENT_TIME_OUT_OF_RANGE: entry(400),
  /** A request cost (event, check, hard limit) that is not a whole number from 1 to MAX_COST. */
  COST_OUT_OF_RANGE: entry(400),
  WEBHOOK_REFUSED: entry(502),
  WEBHOOK_UNAVAILABLE: entry(503),

  // Answered by every HTTP service.
  /** A request that does not match its route's schema; `errors` names each field. */
  INVALID_REQUEST: entry(400),
  NOT_FOUND: entry(404),
  INTERNAL: entry(500),

  // The admin API (control).
  UNAUTHENTICATED: entry(401),
  FORBIDDEN: entry(403),
  CONFLICT: entry(409),
  /** A ban or allowlist entry on a network wider than CONTROL_MIN_PREFIX_V4/V6, without force. */
  NETWORK_TOO_WIDE: entry(400),
  /** A manual ban on a subject that names no client (method, host, country, path…), without force. */
  SUBJECT_TOO_BROAD: entry(400),
  /** A manual ban longer than CONTROL_MAX_BAN_DURATION (force does not lift it). */
  BAN_TOO_LONG: entry(400),
  RATE_LIMITED: entry(429),
  /** A write through the console's session cookie without the session's CSRF token in `x-csrf-token`. */
  CSRF_INVALID: entry(403),
  /** The console's page and scripts are not built (`npm run build` builds packages/console-ui). */
  CONSOLE_NOT_BUILT: entry(503),
  /** The console's live streams are all taken (CONTROL_CONSOLE_MAX_STREAMS). */
  CONSOLE_BUSY: entry(429),
  BACKTEST_BUSY: entry(429),
  /** Policy texts waiting to be checked are at their bound (POST /v1/policies/check). */
  POLICY_CHECK_BUSY: entry(429),
  /** A policy text too large to check within its deadline (POST /v1/policies/check): split it, or use the CLI. */
  POLICY_CHECK_TIMEOUT: entry(413),
  /** A blocklist feed's source that is not an http(s) URL or a file under CONTROL_FEED_FILE_DIR. */
  FEED_SOURCE_INVALID: entry(400),
  /**
   * A blocklist feed's URL, one of its redirects, or the address its name resolves to is not a public
   * address (loopback, private, link-local, …) and not in CONTROL_FEED_ALLOWED_NETWORKS: refused
   * when the feed is added, and as a refresh (bans kept).
   */
  FEED_ADDRESS_REFUSED: entry(400),
  /** A feed refresh refused: the source could not be read within the limits (time, bytes, text); the feed's bans are kept. */
  FEED_SOURCE_FAILED: entry(502),
  /** A feed refresh refused: the source's text is malformed past the tolerance, or lists more than the cap; bans kept. */
  FEED_INVALID: entry(502),
  /** A feed refresh refused: it would lift more of the feed's bans than CONTROL_FEED_MAX_LIFT_PERCENT without force. */
  FEED_LIFT_REFUSED: entry(409),

  // The enforcer sidecar.
  CALLER_NOT_TRUSTED: entry(403),
  BANS_LISTING_BUSY: entry(503),
  /** An Envoy CheckRequest without what a check needs (an HTTP request, a source address) or over a bound. */
  CHECK_REQUEST_INVALID: entry(400),

  // The ingest gateway: 4xx means "fix the request, do not send it again as is"; 503 "retry later".
  INVALID_EVENTS: entry(400),
  BAD_JSON: entry(400),
  BAD_AVRO: entry(400),
  BAD_REQUEST: entry(400),
  UNAUTHORIZED: entry(401),
  BODY_TOO_LARGE: entry(413),
  UNSUPPORTED_MEDIA_TYPE: entry(415),
  BUFFER_FULL: entry(503),
  UNAVAILABLE: entry(503),
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERRORS;

export interface BanstreamErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  /** Structured facts for logs and API bodies; never secrets. */
  details?: Record<string, unknown>;
}

/** Every error banstream raises: a stable code, an optional cause, and whether retrying the same operation can help. */
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
