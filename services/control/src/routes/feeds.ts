import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { allows } from '@banstream/api';
import { tryParseDuration } from '@banstream/core';
import type { FeedRecord } from '@banstream/schemas';
import { ProblemError } from '@banstream/platform';
import { actorOf } from '../auth/guard.js';
import { FeedAddressError } from '../feeds/address-guard.js';
import { lastRefreshOf, originOf, type FeedRefresher } from '../feeds/refresher.js';
import { sourceProblem } from '../feeds/source.js';
import type { GuardRails } from '../guards/index.js';
import { DurationText, errorResponses } from '../http/schemas.js';
import type { ChangeWriter } from '../state/change-writer.js';
import type { ControlState } from '../state/control-state.js';

export interface FeedRoutesOptions {
  state: ControlState;
  writer: ChangeWriter;
  clock: () => number;
  guards: GuardRails;
  feeds: FeedRefresher;
  /** CONTROL_FEED_FILE_DIR: where file sources may lie. */
  feedFileDir: string | undefined;
}

const NAME = '^[a-z0-9][a-z0-9._-]{0,47}$';
const NameParams = Type.Object({ name: Type.String({ pattern: NAME }) });
const MIN_REFRESH_MS = 5_000;
const AddBody = Type.Object(
  {
    name: Type.String({ pattern: NAME, description: 'the feed; its bans have origin feed:<name>' }),
    source: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'an http(s) URL reaching a public address (or one in CONTROL_FEED_ALLOWED_NETWORKS), or the absolute path of a file under CONTROL_FEED_FILE_DIR',
    }),
    format: Type.Optional(Type.Union([Type.Literal('netset'), Type.Literal('csv')], { description: 'netset (the default): one address or network a line, # or ; comments; csv: one column' })),
    column: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'csv: the column of the address, a 1-based index or (with header) its name' })),
    // No schema defaults here: the handler tells an absent field from a given one (header on a netset is refused).
    header: Type.Optional(Type.Boolean({ description: 'csv: the first row names the columns (default false)' })),
    refresh: Type.Optional(DurationText),
    duration: Type.Optional(DurationText),
    status: Type.Optional(Type.Union([Type.Literal(403), Type.Literal(429)], { default: 403 })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    maxEntries: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 100_000, description: 'a refresh that lists more is refused whole' })),
    force: Type.Optional(Type.Boolean({ default: false, description: 'admin only: ban entries wider than CONTROL_MIN_PREFIX_V4/V6 too (they are skipped and counted otherwise)' })),
  },
  { additionalProperties: false },
);
const SyncBody = Type.Optional(
  Type.Object(
    { force: Type.Optional(Type.Boolean({ default: false, description: 'lift more than CONTROL_FEED_MAX_LIFT_PERCENT of the bans (the list really shrank)' })) },
    { additionalProperties: false },
  ),
);
const Outcome = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'what the refresh did: counts added, renewed, lifted, skipped, invalid' });
const FeedView = Type.Object({
  name: Type.String(),
  source: Type.String(),
  format: Type.String(),
  column: Type.Union([Type.String(), Type.Null()]),
  header: Type.Boolean(),
  refreshMs: Type.Integer(),
  banMs: Type.Integer(),
  status: Type.Integer(),
  reason: Type.String(),
  maxEntries: Type.Integer(),
  forced: Type.Union([Type.String(), Type.Null()]),
  createdBy: Type.String(),
  updatedAt: Type.Integer(),
  bans: Type.Integer({ description: 'bans of the feed held now' }),
  lastRefresh: Type.Union([Outcome, Type.Null()]),
});
const tags = ['feeds'];

/** Blocklist feeds: add (or replace), list, sync now, remove (lifting their bans). */
export async function feedRoutes(app: FastifyInstance, options: FeedRoutesOptions): Promise<void> {
  const { state, writer, clock, guards, feeds } = options;
  const ctx = (request: FastifyRequest) => ({ actor: actorOf(request).name, requestId: request.id });
  const view = (f: FeedRecord) => {
    const origin = originOf(f.name);
    let bans = 0;
    for (const b of state.bans.values()) if (b.origin === origin) bans++;
    return {
      name: f.name,
      source: f.source,
      format: f.format,
      column: f.csvColumn,
      header: f.csvHeader,
      refreshMs: f.refreshMs,
      banMs: f.banMs,
      status: f.httpStatus,
      reason: f.reason,
      maxEntries: f.maxEntries,
      forced: f.forced,
      createdBy: f.createdBy,
      updatedAt: f.updatedAt,
      bans,
      lastRefresh: lastRefreshOf(f) ?? null,
    };
  };
  const held = (name: string) => {
    const feed = state.feeds.get(name);
    if (!feed) throw new ProblemError('NOT_FOUND', `no feed ${name}`);
    return feed;
  };

  app.get(
    '/v1/feeds',
    { config: { permission: 'read' }, schema: { tags, summary: 'List blocklist feeds', response: { 200: Type.Object({ feeds: Type.Array(FeedView) }), ...errorResponses } } },
    async () => ({
      feeds: [...state.feeds.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map(view),
    }),
  );

  app.get<{ Params: Static<typeof NameParams> }>(
    '/v1/feeds/:name',
    { config: { permission: 'read' }, schema: { tags, summary: 'A blocklist feed', params: NameParams, response: { 200: FeedView, 404: { $ref: 'Problem#' }, ...errorResponses } } },
    async (request) => view(held(request.params.name)),
  );

  app.post<{ Body: Static<typeof AddBody> }>(
    '/v1/feeds',
    {
      config: { permission: 'feeds:write' },
      schema: {
        tags,
        summary: 'Add (or replace) a blocklist feed; it is refreshed within CONTROL_BAN_SWEEP_MS, or now with sync',
        body: AddBody,
        response: { 200: FeedView, 201: FeedView, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const actor = actorOf(request);
      if (body.force === true && !allows(actor.role, 'feeds:force')) {
        throw new ProblemError('FORBIDDEN', `${actor.name} has the role ${actor.role}; a feed with force (entries wider than the guard rails) needs admin`);
      }
      const fieldError = (path: string, message: string, code: 'INVALID_REQUEST' | 'FEED_SOURCE_INVALID' | 'BAN_TOO_LONG' = 'INVALID_REQUEST') =>
        new ProblemError(code, `${path}: ${message}`, [{ path, message }]);
      const problem = sourceProblem(body.source, options.feedFileDir);
      if (problem !== undefined) throw fieldError('source', problem, 'FEED_SOURCE_INVALID');
      try {
        await feeds.checkAddress(body.source);
      } catch (error) {
        if (error instanceof FeedAddressError) throw new ProblemError('FEED_ADDRESS_REFUSED', `source: ${error.message}`, [{ path: 'source', message: error.message }]);
        throw error;
      }
      const format = body.format ?? 'netset';
      if (format === 'csv' && body.column === undefined) throw fieldError('column', 'a csv feed needs the column of the address (a 1-based index, or a header name with header: true)');
      if (format === 'netset' && (body.column !== undefined || body.header !== undefined)) throw fieldError(body.column !== undefined ? 'column' : 'header', 'is for csv feeds only');
      if (format === 'csv' && body.header !== true && !/^[1-9][0-9]{0,3}$/.test(body.column!)) throw fieldError('column', 'without header: true, the column is a 1-based index');
      const refreshMs = tryParseDuration(body.refresh ?? '1h');
      if (refreshMs === undefined || refreshMs < MIN_REFRESH_MS) throw fieldError('refresh', `must be at least ${MIN_REFRESH_MS / 1000}s`);
      const banMs = tryParseDuration(body.duration ?? '1d');
      if (banMs === undefined || banMs > guards.maxBan.ms)
        throw fieldError('duration', `is longer than the ${guards.maxBan.text} a ban by hand or feed may last (CONTROL_MAX_BAN_DURATION)`, 'BAN_TOO_LONG');
      if (banMs <= 2 * refreshMs) throw fieldError('duration', `must be longer than two refreshes (${2 * refreshMs} ms): the bans of entries still listed are renewed before they run out`);
      const record = await writer.serial(async () => {
        const before = state.feeds.get(body.name);
        const value: FeedRecord = {
          name: body.name,
          source: body.source,
          format,
          csvColumn: format === 'csv' ? body.column! : null,
          csvHeader: format === 'csv' && body.header === true,
          refreshMs,
          banMs,
          httpStatus: body.status ?? 403,
          reason: body.reason ?? `listed by the blocklist feed ${body.name}`,
          maxEntries: body.maxEntries ?? 100_000,
          forced: body.force === true ? 'entries wider than CONTROL_MIN_PREFIX_V4/V6 are banned too' : null,
          createdBy: actor.name,
          updatedAt: clock(),
          // A changed definition keeps its schedule; the next refresh applies it.
          lastRefresh: before?.lastRefresh ?? null,
        };
        await writer.write({ kind: 'feed', key: body.name, value, before }, { ...ctx(request), forced: value.forced });
        return { value, created: before === undefined };
      });
      return reply.code(record.created ? 201 : 200).send(view(record.value));
    },
  );

  app.post<{ Params: Static<typeof NameParams>; Body: Static<typeof SyncBody> }>(
    '/v1/feeds/:name/sync',
    {
      config: { permission: 'feeds:write' },
      schema: {
        tags,
        summary: 'Refresh a feed now; refused (and its bans kept) when the source looks broken',
        params: NameParams,
        body: SyncBody,
        response: { 200: Outcome, 404: { $ref: 'Problem#' }, 409: { $ref: 'Problem#' }, 502: { $ref: 'Problem#' }, ...errorResponses },
      },
    },
    async (request) => {
      held(request.params.name);
      const outcome = await feeds.refresh(request.params.name, ctx(request), request.body?.force === true);
      if (!outcome.ok) throw new ProblemError(outcome.code, `feed ${request.params.name}: ${outcome.error}; its ${outcome.kept} bans are kept`);
      return outcome;
    },
  );

  app.delete<{ Params: Static<typeof NameParams> }>(
    '/v1/feeds/:name',
    {
      config: { permission: 'feeds:write' },
      schema: {
        tags,
        summary: 'Remove a feed, lifting its bans',
        params: NameParams,
        response: { 200: Type.Object({ removed: Type.String(), lifted: Type.Integer() }), 404: { $ref: 'Problem#' }, ...errorResponses },
      },
    },
    async (request) => feeds.remove(request.params.name, ctx(request)),
  );
}
