import { Type } from '@sinclair/typebox';
import { PolicySchema } from '@banstream/core';

/** Schemas of the admin API: they validate requests and make up the OpenAPI document. */

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String(),
    detail: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details with a stable code; `errors` names each invalid field by its path' },
);

/** The policy language (core's schema), for the document; bodies are checked by core's validator for its messages. */
export const PolicyBody = Type.Unsafe<Record<string, unknown>>({ ...PolicySchema, description: 'A policy in the banstream policy language' });

export const PolicyView = Type.Object(
  {
    id: Type.String(),
    version: Type.Integer(),
    mode: Type.String(),
    enabled: Type.Boolean(),
    description: Type.String(),
    owner: Type.String(),
    updatedBy: Type.String(),
    updatedAt: Type.Integer({ description: 'ms since the epoch' }),
    spec: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true })),
    invalid: Type.Optional(Type.String()),
  },
  { description: 'A policy version as stored on the policies topic' },
);

const ValueCountView = Type.Object({ value: Type.String(), count: Type.Number() });

/** Ban v2's evidence (schemas/avro/ban/v2.avsc): null on manual bans and older records. */
export const BanEvidenceView = Type.Object({
  firstEventAt: Type.Integer(),
  lastEventAt: Type.Integer(),
  sampledEvents: Type.Integer(),
  paths: Type.Array(ValueCountView),
  methods: Type.Array(ValueCountView),
  statuses: Type.Array(ValueCountView),
  userAgents: Type.Array(ValueCountView),
  edges: Type.Array(ValueCountView),
});

export const BanView = Type.Object({
  banId: Type.String(),
  subject: Type.String(),
  policyId: Type.String(),
  reason: Type.String(),
  evidenceCount: Type.Number(),
  windowSeconds: Type.Integer(),
  startedAt: Type.Integer(),
  expiresAt: Type.Integer(),
  preview: Type.Boolean(),
  escalationLevel: Type.Integer(),
  origin: Type.String(),
  httpStatus: Type.Integer(),
  createdBy: Type.Union([Type.String(), Type.Null()]),
  evidence: Type.Optional(Type.Union([BanEvidenceView, Type.Null()], { description: 'what the subject sent, on aggregator bans (docs/bans.md)' })),
});

/** A ban in a search result: without its evidence (GET /v1/bans/{subject} has it), so a page of 1,000 stays small. */
export const BanSummaryView = Type.Omit(BanView, ['evidence']);

export const AllowView = Type.Object({
  entry: Type.String(),
  reason: Type.String(),
  addedBy: Type.String(),
  addedAt: Type.Integer(),
  expiresAt: Type.Union([Type.Integer(), Type.Null()]),
  expired: Type.Boolean(),
});

export const AlertView = Type.Object({
  alertId: Type.String(),
  scope: Type.String(),
  code: Type.String(),
  state: Type.String(),
  currentRate: Type.Number(),
  baselineRate: Type.Number(),
  zScore: Type.Number(),
  ratio: Type.Number(),
  hourOfWeek: Type.Integer(),
  at: Type.Integer(),
});

/** A duration in the policy language: 30s, 15m, 2h, 7d. */
export const DurationText = Type.String({ pattern: '^[1-9][0-9]*(ms|s|m|h|d)$', description: 'a duration such as 30s, 15m, 2h, 7d' });

/** Places a ban or allowlist entry on a network wider than the configured minimum prefix; the audit records it as forced. */
export const ForceFlag = Type.Optional(
  Type.Boolean({
    default: false,
    description: 'needed for a network wider than CONTROL_MIN_PREFIX_V4/V6 (default /8 and /32); the audit record says what it overrode',
  }),
);

/** An instant: ISO 8601, ms since the epoch, or a duration meaning that long ago (`6h`). */
export const InstantText = Type.String({ minLength: 1, maxLength: 40, description: 'ISO 8601 time, ms since the epoch, or a duration ago such as 6h' });

export const errorResponses = {
  400: { $ref: 'Problem#' },
  401: { $ref: 'Problem#' },
  403: { $ref: 'Problem#' },
  429: { $ref: 'Problem#' },
} as const;
