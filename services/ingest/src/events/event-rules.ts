import { MAX_COST, MAX_IP_TEXT_LENGTH } from '@banstream/core';
import type { FieldRule } from './avro-json-schema.js';

/**
 * What the gateway asks of each RequestEvent beyond its Avro shape. Limits bound the
 * memory and the subjects an edge can make the pipeline hold; a value over a limit is
 * refused, never cut (a cut path or user id would count under another subject).
 */
export const EVENT_RULES: Readonly<Record<string, FieldRule>> = {
  eventId: { minLength: 1, maxLength: 128 },
  timestamp: { minimum: 1 },
  ip: { minLength: 1, maxLength: MAX_IP_TEXT_LENGTH },
  country: { pattern: '^[A-Za-z]{2}$' },
  region: { pattern: '^[A-Za-z]{2}-[A-Za-z0-9]{1,3}$' },
  asn: { minimum: 0, maximum: 0xffffffff },
  method: { pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,16}$" },
  host: { minLength: 1, maxLength: 255 },
  path: { minLength: 1, maxLength: 2048 },
  route: { maxLength: 512 },
  status: { minimum: 0, maximum: 999 },
  userId: { maxLength: 256 },
  apiKeyHash: { pattern: '^[0-9A-Fa-f]{64}$' },
  headers: { maxProperties: 32, values: { maxLength: 1024 } },
  edgeId: { minLength: 1, maxLength: 128 },
  latencyMs: { minimum: 0 },
  cost: { minimum: 1, maximum: MAX_COST },
};

/**
 * The receiving clock, and how far ahead of it an event may be dated
 * (INGEST_MAX_FUTURE_MS). An edge dates its events when it answers, before sending
 * them, so an honest event is behind this clock by its transit, ahead only by the
 * edge's clock error; further ahead it claims a time that has not come, which would
 * move the aggregator's clocks (issue 25) and which the aggregator refuses anyway.
 */
export interface TimeBound {
  nowMs: number;
  maxFutureMs: number;
}

/** Header names: an RFC 9110 token of at most 64 characters. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;

/** Credentials never leave the edge (schema doc of `headers`). */
export const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization']);
