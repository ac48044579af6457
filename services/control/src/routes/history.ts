import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { keyPartition } from '@banstream/core';
import type { Decoder, BanHistoryEntry } from '@banstream/schemas';
import { BanView, errorResponses } from '../http/schemas.js';
import type { PartitionScanner } from '../state/partition-scan.js';
import { canonicalSubject } from './subjects.js';
import { pageCursor, parseCursor, type QueryBounds, TimeRange, timeRange } from './scan-query.js';

export interface HistoryRoutesOptions {
  scanner: PartitionScanner;
  topics: { history: string };
  historyCodec: Decoder<BanHistoryEntry>;
  clock: () => number;
  bounds: QueryBounds;
}

const Params = Type.Object({ subject: Type.String({ minLength: 1, maxLength: 4096 }) });
const Query = Type.Object(
  {
    ...TimeRange,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    after: Type.Optional(Type.String({ maxLength: 64, description: 'paging cursor: the `next` of the previous page' })),
  },
  { additionalProperties: false },
);
const HistoryView = Type.Object({
  action: Type.String({ description: 'ban, lift or expire' }),
  at: Type.Integer(),
  actor: Type.Union([Type.String(), Type.Null()]),
  ban: BanView,
});

/**
 * A subject's bans, lifts and expiries from the ban-history topic, oldest first. The
 * topic is keyed by subject, so one partition holds a subject's history: a page reads
 * that partition from the offset of `since` (Kafka's offsets by time), skipping other
 * subjects' records, and stops at `limit` entries, `until`, CONTROL_QUERY_MAX_SCANNED
 * records or CONTROL_QUERY_BUDGET_MS, whichever comes first (`next` resumes there).
 */
export async function historyRoutes(app: FastifyInstance, options: HistoryRoutesOptions): Promise<void> {
  const { scanner, topics, historyCodec, clock, bounds } = options;
  let partitions: number | undefined;
  app.get<{ Params: Static<typeof Params>; Querystring: Static<typeof Query> }>(
    '/v1/bans/:subject/history',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['bans'],
        summary: "A subject's bans, lifts and expiries, oldest first",
        params: Params,
        querystring: Query,
        response: {
          200: Type.Object({ subject: Type.String(), entries: Type.Array(HistoryView), next: Type.Union([Type.String(), Type.Null()]), scanned: Type.Integer() }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const subject = canonicalSubject(request.params.subject);
      const { fromMs, toMs } = timeRange(request.query, clock());
      partitions ??= await scanner.partitions(topics.history);
      const partition = keyPartition(Buffer.from(subject), Math.max(1, partitions));
      // An aggregator that crashed between a ban's send and its history's sends the history
      // again on replay (its decider): the same entry twice is shown once (within a page).
      const shown = new Set<string>();
      const page = await scanner.scan({
        topic: topics.history,
        partition,
        fromMs,
        toMs,
        startOffset: parseCursor(request.query.after, partition),
        limit: request.query.limit ?? 100,
        ...bounds,
        match: (key, value) => {
          if (value === null || key === null || key.toString() !== subject) return undefined;
          const entry = historyCodec.decode(value);
          const identity = `${entry.action}|${entry.at}|${entry.ban.banId}`;
          if (shown.has(identity)) return undefined;
          shown.add(identity);
          return { action: entry.action, at: entry.at, actor: entry.actor, ban: entry.ban };
        },
      });
      return { subject, entries: page.items, next: pageCursor(partition, page.next), scanned: page.scanned };
    },
  );
}
