import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { MAX_COST } from '../cost.js';

/**
 * The policy language: one TypeBox schema that is both the JSON Schema a policy
 * file is validated against and the TypeScript type the code uses. Rules that span
 * fields (a hard policy needs a failure mode, …) live in validate.ts.
 */

/** `30s`, `5m`, `1h`, `7d`, or a bare number of seconds. */
export const Duration = Type.Union([
  Type.String({ pattern: '^[1-9][0-9]*(ms|s|m|h|d)$', description: 'a duration such as 500ms, 30s, 5m, 1h, 7d' }),
  Type.Integer({ exclusiveMinimum: 0, description: 'seconds' }),
]);

const Id = Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$', description: 'lower-case letters, digits, dot, dash, underscore; at most 64' });
const Country = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, e.g. FR' });
const Region = Type.String({ pattern: '^[A-Z]{2}-[A-Z0-9]{1,3}$', description: 'ISO 3166-2, e.g. FR-IDF' });
const NonEmptyList = <T extends TSchema>(item: T) => Type.Array(item, { minItems: 1, uniqueItems: true });

export const HeaderPredicate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128, description: 'header name, case-insensitive' }),
    present: Type.Optional(Type.Boolean()),
    equals: Type.Optional(Type.String()),
    contains: Type.Optional(Type.String({ minLength: 1 })),
    /** A regular expression, compiled once when the policy is loaded. */
    matches: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  },
  { additionalProperties: false },
);

export const Match = Type.Object(
  {
    methods: Type.Optional(NonEmptyList(Type.String({ pattern: '^[A-Z]+$' }))),
    /** Exact host or `*.example.com` (any sub-domain). */
    hosts: Type.Optional(NonEmptyList(Type.String({ minLength: 1, maxLength: 253 }))),
    /** Path prefixes: `/api/` matches `/api/x`. */
    pathPrefixes: Type.Optional(NonEmptyList(Type.String({ pattern: '^/' }))),
    /** Path globs: `*` is one segment, `**` any number of segments. */
    paths: Type.Optional(NonEmptyList(Type.String({ pattern: '^/', maxLength: 512 }))),
    headers: Type.Optional(NonEmptyList(HeaderPredicate)),
    countries: Type.Optional(NonEmptyList(Country)),
    regions: Type.Optional(NonEmptyList(Region)),
    /** Which responses count: only 401/403 makes a brute-force rule count failures only. */
    statuses: Type.Optional(NonEmptyList(Type.Integer({ minimum: 100, maximum: 599 }))),
    statusClasses: Type.Optional(NonEmptyList(Type.Union([Type.Literal('1xx'), Type.Literal('2xx'), Type.Literal('3xx'), Type.Literal('4xx'), Type.Literal('5xx')]))),
    /** Only these subjects (for an override of one merchant, tenant or API key). */
    subjects: Type.Optional(NonEmptyList(Type.String({ minLength: 3, maxLength: 512 }))),
  },
  { additionalProperties: false },
);

/** Most cost rules in one policy: each is tried in order, per counted request. */
export const MAX_COST_RULES = 64;

/**
 * What a request counts for in this policy's windows: the first rule whose conditions
 * all hold gives the cost (the conditions read as in `match`); a request no rule
 * matches counts for its own cost (the event's or check()'s, 1 by default).
 */
export const CostRule = Type.Object(
  {
    methods: Type.Optional(NonEmptyList(Type.String({ pattern: '^[A-Z]+$' }))),
    pathPrefixes: Type.Optional(NonEmptyList(Type.String({ pattern: '^/' }))),
    paths: Type.Optional(NonEmptyList(Type.String({ pattern: '^/', maxLength: 512 }))),
    /** Route templates as the edge reports them (`/users/:id`), compared whole. */
    routes: Type.Optional(NonEmptyList(Type.String({ minLength: 1, maxLength: 512 }))),
    cost: Type.Integer({ minimum: 1, maximum: MAX_COST }),
  },
  { additionalProperties: false },
);

export const Threshold = Type.Object(
  {
    count: Type.Integer({ exclusiveMinimum: 0 }),
    interval: Duration,
    /** Token-bucket allowance for hard limits: bucket size and refill per second. */
    burst: Type.Optional(Type.Object({ size: Type.Integer({ exclusiveMinimum: 0 }), refillPerSecond: Type.Number({ exclusiveMinimum: 0 }) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

const ExceedStatus = Type.Union([Type.Literal(429), Type.Literal(403)]);

export const Action = Type.Union([
  /** Deny the share of requests above the threshold, so the admitted rate stays near it. */
  Type.Object({ type: Type.Literal('throttle'), status: Type.Optional(ExceedStatus) }, { additionalProperties: false }),
  /**
   * Cloud Armor rate_based_ban: above `threshold` the exceed action (deny the excess
   * share, or every request); above `banThreshold` ban for `banDuration`.
   */
  Type.Object(
    {
      type: Type.Literal('ban'),
      status: Type.Optional(ExceedStatus),
      /** Between threshold and ban: `excess` (default, as Cloud Armor), `all`, or `none` (the ban alone). */
      exceed: Type.Optional(Type.Union([Type.Literal('excess'), Type.Literal('all'), Type.Literal('none')])),
      banThreshold: Type.Optional(Type.Object({ count: Type.Integer({ exclusiveMinimum: 0 }), interval: Duration }, { additionalProperties: false })),
      banDuration: Duration,
    },
    { additionalProperties: false },
  ),
  Type.Object({ type: Type.Literal('alert') }, { additionalProperties: false }),
]);

export const Enforcement = Type.Object(
  {
    type: Type.Union([Type.Literal('async'), Type.Literal('hard')]),
    /**
     * What decides while the policy's state is out of reach: for a hard policy, Redis
     * down or slow; for an async one, an enforcer whose caches are still loading.
     */
    failureMode: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('local')])),
    /** Hard policies only; default sliding-window, token-bucket needs threshold.burst. */
    algorithm: Type.Optional(Type.Union([Type.Literal('sliding-window'), Type.Literal('sliding-log'), Type.Literal('token-bucket')])),
  },
  { additionalProperties: false },
);

const Day = Type.Union([Type.Literal('mon'), Type.Literal('tue'), Type.Literal('wed'), Type.Literal('thu'), Type.Literal('fri'), Type.Literal('sat'), Type.Literal('sun')]);

export const Schedule = Type.Object(
  {
    timeZone: Type.String({ minLength: 1, description: 'IANA time zone, e.g. Europe/Paris' }),
    days: Type.Optional(NonEmptyList(Day)),
    /** Local wall-clock `HH:MM`; `to` before `from` spans midnight. */
    from: Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' }),
    to: Type.String({ pattern: '^([01][0-9]|2[0-4]):[0-5][0-9]$' }),
  },
  { additionalProperties: false },
);

export const Escalation = Type.Object(
  {
    /** Each repeat ban lasts `multiplier` times the previous one … */
    multiplier: Type.Number({ minimum: 1, maximum: 100 }),
    /** … up to this cap … */
    maxDuration: Duration,
    /** … and the level decays back to the base after this long without a ban. */
    decayAfter: Duration,
  },
  { additionalProperties: false },
);

/** A policy as written, one entry of a PolicyDocument; validated, it is a PolicySpec (record.ts lists the other forms). */
export const PolicySchema = Type.Object(
  {
    id: Id,
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    owner: Type.Optional(Type.String({ maxLength: 200 })),
    /** New policies are dry runs until someone says `enforce`. */
    mode: Type.Optional(Type.Union([Type.Literal('enforce'), Type.Literal('preview')], { default: 'preview' })),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    /** Policies sharing a group compete: for one subject only the highest priority applies. */
    group: Type.Optional(Id),
    priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000, default: 0 })),
    match: Type.Optional(Match),
    key: NonEmptyList(Type.String({ minLength: 1, maxLength: 64, description: 'a key dimension: ip, prefix, user, apikey, header:<name>, …' })),
    threshold: Threshold,
    /** Cost per route or method; absent: every request counts for its own cost. */
    costs: Type.Optional(Type.Array(CostRule, { minItems: 1, maxItems: MAX_COST_RULES })),
    action: Action,
    enforcement: Type.Optional(Enforcement),
    schedule: Type.Optional(Schedule),
    escalation: Type.Optional(Escalation),
  },
  { additionalProperties: false },
);

/** An allowlist entry as written in a policy document; validated, an AllowEntrySpec (the allowlist topic's record is schemas' AllowEntry). */
export const AllowEntrySchema = Type.Object(
  {
    /** An IP, a CIDR, or a subject such as `user:42` or `apikey:<hash>`. */
    entry: Type.String({ minLength: 1, maxLength: 512 }),
    reason: Type.Optional(Type.String({ maxLength: 1000 })),
    addedBy: Type.Optional(Type.String({ maxLength: 200 })),
    /** ISO 8601 time after which the entry no longer applies. */
    expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

/** A policy file: a list of policies and, optionally, allowlist entries. */
export const PolicyDocument = Type.Object(
  {
    policies: Type.Array(PolicySchema),
    allowlist: Type.Optional(Type.Array(AllowEntrySchema)),
  },
  { additionalProperties: false },
);

export type Duration = Static<typeof Duration>;
export type PolicySpec = Static<typeof PolicySchema>;
export type MatchSpec = Static<typeof Match>;
export type ThresholdSpec = Static<typeof Threshold>;
export type CostRuleSpec = Static<typeof CostRule>;
export type ActionSpec = Static<typeof Action>;
export type ScheduleSpec = Static<typeof Schedule>;
export type EscalationSpec = Static<typeof Escalation>;
export type AllowEntrySpec = Static<typeof AllowEntrySchema>;
export type PolicyDocumentSpec = Static<typeof PolicyDocument>;
