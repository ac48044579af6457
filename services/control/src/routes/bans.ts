import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { banId, parseDuration, responseOnlyScope } from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import { ProblemError } from '@banstream/platform';
import { actorOf } from '../auth/guard.js';
import { banDurationProblem, type GuardRails } from '../guards/index.js';
import { BanSummaryView, BanView, DurationText, errorResponses, ForceFlag } from '../http/schemas.js';
import type { ChangeWriter } from '../state/change-writer.js';
import type { ControlState } from '../state/control-state.js';
import { banForcedOver } from './force.js';
import { canonicalSubject } from './subjects.js';

export interface BanRoutesOptions {
  state: ControlState;
  writer: ChangeWriter;
  clock: () => number;
  guards: GuardRails;
}

const MANUAL = 'manual';
const Query = Type.Object(
  {
    scope: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_.-]*$', description: 'first scope of the subject: ip, cidr, user, apikey…' })),
    subject: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'the start of the subject (user:42) or of its value (203.0.113.)' })),
    policy: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    origin: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'aggregator or manual' })),
    includeExpired: Type.Optional(Type.Boolean({ default: false })),
    after: Type.Optional(Type.String({ maxLength: 4096, description: 'paging cursor: the `next` of the previous page' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);
const SubjectParams = Type.Object({ subject: Type.String({ minLength: 1, maxLength: 4096 }) });
const AddBody = Type.Object(
  {
    subject: Type.String({ minLength: 1, maxLength: 4096, description: 'an address, a network, or scope:value (user:42)' }),
    duration: DurationText,
    reason: Type.String({ minLength: 1, maxLength: 1000 }),
    status: Type.Optional(Type.Union([Type.Literal(403), Type.Literal(429)], { default: 403 })),
    force: ForceFlag,
  },
  { additionalProperties: false },
);
const tags = ['bans'];

/** Bans: search the bans topic, place a manual ban, lift any ban with a tombstone. */
export async function banRoutes(app: FastifyInstance, options: BanRoutesOptions): Promise<void> {
  const { state, writer, clock, guards } = options;

  app.get<{ Querystring: Static<typeof Query> }>(
    '/v1/bans',
    {
      config: { permission: 'read' },
      schema: {
        tags,
        summary: 'Search bans by scope, subject, policy and origin',
        querystring: Query,
        response: { 200: Type.Object({ bans: Type.Array(BanSummaryView), total: Type.Integer(), next: Type.Union([Type.String(), Type.Null()]) }), ...errorResponses },
      },
    },
    async (request) => state.banIndex.search({ ...request.query, limit: request.query.limit ?? 100 }, clock()),
  );

  app.get<{ Params: Static<typeof SubjectParams> }>(
    '/v1/bans/:subject',
    {
      config: { permission: 'read' },
      schema: { tags, summary: 'The ban held for a subject', params: SubjectParams, response: { 200: BanView, 404: { $ref: 'Problem#' }, ...errorResponses } },
    },
    async (request) => held(state, canonicalSubject(request.params.subject)),
  );

  app.post<{ Body: Static<typeof AddBody> }>(
    '/v1/bans',
    {
      config: { permission: 'bans:write' },
      schema: { tags, summary: 'Ban a subject by hand for a duration', body: AddBody, response: { 201: BanView, ...errorResponses } },
    },
    async (request, reply) => {
      const { body } = request;
      const subject = canonicalSubject(body.subject);
      const responseOnly = responseOnlyScope(subject);
      if (responseOnly !== undefined) {
        const message = `${responseOnly} cannot be banned: the enforcer checks a request before its response, so no request carries a ${responseOnly}`;
        throw new ProblemError('SUBJECT_INVALID', `subject: ${message}`, [{ path: 'subject', message }]);
      }
      const tooLong = banDurationProblem(body.duration, guards.maxBan);
      if (tooLong !== undefined) throw new ProblemError('BAN_TOO_LONG', `duration: ${tooLong}`, [{ path: 'duration', message: tooLong }]);
      const forced = banForcedOver(subject, guards.minPrefix, body.force === true);
      const actor = actorOf(request).name;
      const ban = await writer.serial(async () => {
        const now = clock();
        const record: Ban = {
          banId: banId(MANUAL, subject, now),
          subject,
          policyId: MANUAL,
          reason: body.reason,
          evidenceCount: 0,
          windowSeconds: 0,
          startedAt: now,
          expiresAt: now + parseDuration(body.duration),
          preview: false,
          escalationLevel: 0,
          origin: MANUAL,
          httpStatus: body.status ?? 403,
          createdBy: actor,
        };
        await writer.write({ kind: 'ban', key: subject, value: record, before: state.bans.get(subject) }, { actor, requestId: request.id, forced });
        return record;
      });
      return reply.code(201).send(ban);
    },
  );

  app.delete<{ Params: Static<typeof SubjectParams> }>(
    '/v1/bans/:subject',
    {
      config: { permission: 'bans:write' },
      schema: {
        tags,
        summary: 'Lift a ban (a tombstone on the bans topic)',
        params: SubjectParams,
        response: { 200: Type.Object({ lifted: Type.String(), ban: BanView }), 404: { $ref: 'Problem#' }, ...errorResponses },
      },
    },
    async (request) =>
      writer.serial(async () => {
        const before = held(state, canonicalSubject(request.params.subject));
        await writer.write({ kind: 'ban', key: before.subject, value: null, before }, { actor: actorOf(request).name, requestId: request.id });
        return { lifted: before.subject, ban: before };
      }),
  );
}

function held(state: ControlState, subject: string): Ban {
  const ban = state.bans.get(subject);
  if (!ban) throw new ProblemError('NOT_FOUND', `no ban on ${subject}`);
  return ban;
}

/** Manual bans past their expiry: the aggregator lifts only its own, so the control plane lifts these. */
export function expiredManualBans(state: ControlState, nowMs: number): Ban[] {
  return state.banIndex.expiredOf(MANUAL, nowMs);
}
