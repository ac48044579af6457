/**
 * TypeScript shapes of the records in `schemas/avro/*` (newest version of each). The
 * .avsc files are the contract; these mirror them, and the round-trip tests encode a
 * typed sample of each through the real schema.
 *
 * Representation choices (avsc defaults, kept on purpose):
 * - `long` decodes to a JS number. Every long here (timestamps in ms, offsets, ASNs)
 *   stays far below 2^53, and avsc refuses to decode a long it cannot represent
 *   exactly rather than round it.
 * - `timestamp-millis` is not turned into a Date: timestamps are plain numbers of ms
 *   since the Unix epoch (UTC), which is what clocks and window arithmetic use.
 * - Nullable fields (`["null", T]`) are `T | null`; `bytes` is a Buffer.
 * - Fields that are strings on purpose (open sets) list their known values as
 *   constants below, but readers must accept values they do not know.
 */
import type { PolicyMode, PolicyRecord } from '@banstream/core';

/** Catalog names: the folder of each record under schemas/avro. */
export const SCHEMA_NAMES = {
  requestEvent: 'request-event',
  requestEventBatch: 'request-event-batch',
  ban: 'ban',
  windowCount: 'window-count',
  geoAlert: 'geo-alert',
  geoBaseline: 'geo-baseline',
  policy: 'policy',
  allowEntry: 'allow-entry',
  auditRecord: 'audit-record',
  dlqRecord: 'dlq-record',
  subjectCountBatch: 'subject-count-batch',
  feed: 'feed',
  banHistory: 'ban-history',
} as const;

export type SchemaName = (typeof SCHEMA_NAMES)[keyof typeof SCHEMA_NAMES];

export interface RequestEvent {
  eventId: string;
  /** Event time, ms since epoch. */
  timestamp: number;
  ip: string;
  country: string | null;
  region: string | null;
  asn: number | null;
  method: string;
  host: string;
  path: string;
  route: string | null;
  status: number;
  userId: string | null;
  apiKeyHash: string | null;
  headers: Record<string, string>;
  edgeId: string;
  latencyMs: number | null;
  /**
   * What the request counts for, 1 to MAX_COST (@banstream/core). Always there when
   * read (1 for a v1 record); a writer may leave it out for 1.
   */
  cost?: number;
}

export interface RequestEventBatch {
  events: RequestEvent[];
}

/** Origins of bans; a blocklist feed's bans have `feed:<name>` (FEED_ORIGIN_PREFIX + name). */
export const BAN_ORIGINS = ['aggregator', 'manual'] as const;
export const FEED_ORIGIN_PREFIX = 'feed:';

export interface Ban {
  banId: string;
  subject: string;
  policyId: string;
  reason: string;
  evidenceCount: number;
  windowSeconds: number;
  startedAt: number;
  expiresAt: number;
  preview: boolean;
  escalationLevel: number;
  /** One of BAN_ORIGINS, or `feed:<name>`. */
  origin: string;
  /** 429 or 403. */
  httpStatus: number;
  createdBy: string | null;
  /**
   * v2: what the subject sent, on aggregator bans. Decoded records always have it
   * (null for manual bans and older writers); writers may leave it out for null.
   */
  evidence?: BanEvidence | null;
}

/** One value of a request attribute and the events estimated to have it. */
export interface ValueCount {
  value: string;
  count: number;
}

export interface BanEvidence {
  /** ms since epoch: the first event in the ban window (the window's start when its oldest bucket straddles it). */
  firstEventAt: number;
  lastEventAt: number;
  /** Events the sample was drawn from; 0 without a sample. */
  sampledEvents: number;
  paths: ValueCount[];
  methods: ValueCount[];
  statuses: ValueCount[];
  userAgents: ValueCount[];
  edges: ValueCount[];
}

export const BAN_HISTORY_ACTIONS = ['ban', 'lift', 'expire'] as const;

/** One ban, lift or expiry on the ban-history topic, keyed by subject. */
export interface BanHistoryEntry {
  subject: string;
  /** One of BAN_HISTORY_ACTIONS today. */
  action: string;
  at: number;
  actor: string | null;
  ban: Ban;
}

export const WINDOW_COUNT_KINDS = ['subject', 'country', 'region', 'hour-of-day'] as const;

export interface WindowCount {
  policyId: string;
  subject: string;
  /** One of WINDOW_COUNT_KINDS today. */
  kind: string;
  count: number;
  windowSeconds: number;
  threshold: number;
  observedAt: number;
  final: boolean;
}

export const GEO_SCOPES = ['country', 'region'] as const;

/** An Avro enum: a closed set. */
export type GeoAlertState = 'fired' | 'resolved';

export interface GeoAlert {
  alertId: string;
  /** One of GEO_SCOPES today. */
  scope: string;
  code: string;
  state: GeoAlertState;
  currentRate: number;
  baselineRate: number;
  zScore: number;
  ratio: number;
  /** 0..167, 0 = Monday 00:00 UTC. */
  hourOfWeek: number;
  at: number;
  /** IANA zone of the baseline's hours (v2; `UTC` from older writers). */
  timeZone: string;
  /** 0..167 in timeZone: the baseline bucket judged (v2; null from older writers). */
  localHourOfWeek: number | null;
}

/** Internal to the aggregator: what geographic alerting learned about one subject. */
export interface GeoBaseline {
  subject: string;
  timeZone: string;
  evaluatedUntil: number;
  /** 168 items each, by local hour of the week. */
  samples: number[];
  means: number[];
  variances: number[];
  alert: { firedAt: number; normalSince: number | null } | null;
  cooldownUntil: number;
  updatedAt: number;
}

/** The policies topic's record is a domain type: core owns it, beside a policy's other forms. */
export type { PolicyMode, PolicyRecord };

export interface AllowEntry {
  entry: string;
  reason: string;
  addedBy: string;
  addedAt: number;
  expiresAt: number | null;
}

/** A blocklist feed (schemas/avro/feed): what the control plane refreshes into bans. */
export interface FeedRecord {
  name: string;
  source: string;
  /** `netset` or `csv` today. */
  format: string;
  csvColumn: string | null;
  csvHeader: boolean;
  refreshMs: number;
  banMs: number;
  httpStatus: number;
  reason: string;
  maxEntries: number;
  forced: string | null;
  createdBy: string;
  updatedAt: number;
  /** JSON text of the last refresh's outcome; null before the first. */
  lastRefresh: string | null;
}

export interface AuditRecord {
  auditId: string;
  actor: string;
  action: string;
  target: string;
  before: string | null;
  after: string | null;
  at: number;
  requestId: string | null;
  /** v2: the guard rail overridden with force, or null. */
  forced: string | null;
}

export interface DlqRecord {
  originalTopic: string;
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer;
  reasonCode: string;
  reasonMessage: string;
  at: number;
}

/** One entry of the aggregator's repartition topic (internal). */
export interface SubjectCountEntry {
  offset: number;
  policyId: string;
  subject: string;
  timestamp: number;
  count: number;
  /** v2: position among its record's entries for one owner partition (0 from a v1 writer). */
  seq: number;
}

export interface SubjectCountBatch {
  sourcePartition: number;
  entries: SubjectCountEntry[];
}

/** Record type of each catalog name, so `catalog.codec(SCHEMA_NAMES.ban)` is typed. */
export interface SchemaTypes {
  'request-event': RequestEvent;
  'request-event-batch': RequestEventBatch;
  ban: Ban;
  'window-count': WindowCount;
  'geo-alert': GeoAlert;
  'geo-baseline': GeoBaseline;
  policy: PolicyRecord;
  'allow-entry': AllowEntry;
  'audit-record': AuditRecord;
  'dlq-record': DlqRecord;
  'subject-count-batch': SubjectCountBatch;
  feed: FeedRecord;
  'ban-history': BanHistoryEntry;
}
