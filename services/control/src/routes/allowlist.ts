import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { canonicalAllowEntry, tryParseDuration } from '@banstream/core';
import type { AllowEntry } from '@banstream/schemas';
import { ProblemError } from '@banstream/platform';
import { actorOf } from '../auth/guard.js';
import type { MinPrefix } from '../guards/index.js';
import { AllowView, DurationText, errorResponses, ForceFlag } from '../http/schemas.js';
import type { ChangeWriter } from '../state/change-writer.js';
import type { ControlState } from '../state/control-state.js';
import { forcedOver } from './force.js';
import { listRoute } from './list-route.js';

export interface AllowRoutesOptions {
  state: ControlState;
  writer: ChangeWriter;
  clock: () => number;
  guards: { minPrefix: MinPrefix };
}

const EntryParams = Type.Object({ entry: Type.String({ minLength: 1, maxLength: 512 }) });
const AddBody = Type.Object(
  {
    entry: Type.String({ minLength: 1, maxLength: 512, description: 'an address, a network (10.0.0.0/8), user:<id> or apikey:<hash>' }),
    reason: Type.String({ minLength: 1, maxLength: 1000 }),
    expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
    ttl: Type.Optional(DurationText),
    force: ForceFlag,
  },
  { additionalProperties: false },
);
const tags = ['allowlist'];

/** The allowlist: entries that win over every ban and limit, each with a reason and an optional expiry. */
export async function allowRoutes(app: FastifyInstance, options: AllowRoutesOptions): Promise<void> {
  const { state, writer, clock, guards } = options;
  const view = (e: AllowEntry) => ({ ...e, expired: e.expiresAt !== null && e.expiresAt <= clock() });

  listRoute(app, {
    path: '/v1/allowlist',
    tags,
    summary: 'List allowlist entries',
    field: 'entries',
    item: AllowView,
    items: () => [...state.allowlist.values()].map(view),
    key: (e) => e.entry,
  });

  app.post<{ Body: Static<typeof AddBody> }>(
    '/v1/allowlist',
    {
      config: { permission: 'allowlist:write' },
      schema: { tags, summary: 'Add (or replace) an allowlist entry', body: AddBody, response: { 201: AllowView, ...errorResponses } },
    },
    async (request, reply) => {
      const { body } = request;
      if (body.expiresAt !== undefined && body.ttl !== undefined) {
        throw new ProblemError('INVALID_REQUEST', 'give expiresAt or ttl, not both', [{ path: 'ttl', message: 'cannot be given with expiresAt' }]);
      }
      const ttlMs = body.ttl === undefined ? undefined : tryParseDuration(body.ttl);
      if (body.ttl !== undefined && ttlMs === undefined) throw new ProblemError('INVALID_REQUEST', 'ttl: is too long', [{ path: 'ttl', message: 'is too long' }]);
      const entry = canonicalAllowEntry(body.entry);
      const forced = forcedOver(entry, guards.minPrefix, body.force === true, { what: 'allowlist entry', field: 'entry' });
      const actor = actorOf(request).name;
      const record = await writer.serial(async () => {
        const now = clock();
        const expiresAt = ttlMs !== undefined ? now + ttlMs : body.expiresAt !== undefined ? Date.parse(body.expiresAt) : null;
        if (expiresAt !== null && expiresAt <= now) throw new ProblemError('INVALID_REQUEST', 'expiresAt: is in the past', [{ path: 'expiresAt', message: 'is in the past' }]);
        const value: AllowEntry = { entry, reason: body.reason, addedBy: actor, addedAt: now, expiresAt };
        await writer.write({ kind: 'allow', key: entry, value, before: state.allowlist.get(entry) }, { actor, requestId: request.id, forced });
        return value;
      });
      return reply.code(201).send(view(record));
    },
  );

  app.delete<{ Params: Static<typeof EntryParams> }>(
    '/v1/allowlist/:entry',
    {
      config: { permission: 'allowlist:write' },
      schema: {
        tags,
        summary: 'Remove an allowlist entry (a tombstone)',
        params: EntryParams,
        response: { 200: Type.Object({ removed: Type.String() }), 404: { $ref: 'Problem#' }, ...errorResponses },
      },
    },
    async (request) =>
      writer.serial(async () => {
        const entry = canonicalAllowEntry(request.params.entry);
        const before = state.allowlist.get(entry);
        if (!before) throw new ProblemError('NOT_FOUND', `no allowlist entry ${entry}`);
        await writer.write({ kind: 'allow', key: entry, value: null, before }, { actor: actorOf(request).name, requestId: request.id });
        return { removed: entry };
      }),
  );
}
