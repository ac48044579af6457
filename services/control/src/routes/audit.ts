import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { AuditRecord, Decoder } from '@banstream/schemas';
import { errorResponses } from '../http/schemas.js';
import type { PartitionScanner } from '../state/partition-scan.js';
import { pageCursor, type QueryBounds, TimeRange, timeRange } from './scan-query.js';
import { ProblemError } from '@banstream/platform';

export interface AuditRoutesOptions {
  scanner: PartitionScanner;
  topics: { audit: string };
  auditCodec: Decoder<AuditRecord>;
  clock: () => number;
  bounds: QueryBounds;
}

const Query = Type.Object(
  {
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'who made the change (exact)' })),
    target: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'what was changed: policy id, subject, allowlist entry (exact)' })),
    action: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_-]*(\\.[a-z][a-z0-9_-]*)?$', description: '`ban.lift`, or a noun alone (`ban`) for all its actions' })),
    ...TimeRange,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    after: Type.Optional(Type.String({ maxLength: 64, description: 'paging cursor: the `next` of the previous page' })),
  },
  { additionalProperties: false },
);
const AuditView = Type.Object({
  auditId: Type.String(),
  actor: Type.String(),
  action: Type.String(),
  target: Type.String(),
  before: Type.Union([Type.String(), Type.Null()]),
  after: Type.Union([Type.String(), Type.Null()]),
  at: Type.Integer(),
  requestId: Type.Union([Type.String(), Type.Null()]),
  forced: Type.Union([Type.String(), Type.Null()]),
});

/**
 * The audit trail, filtered by actor, target, action and time, oldest first. A page
 * reads the audit topic from the offset of `since` and stops at `limit` matches,
 * `until`, CONTROL_QUERY_MAX_SCANNED records or CONTROL_QUERY_BUDGET_MS (`next`
 * resumes there), partition after partition (banstream creates it with one).
 */
export async function auditRoutes(app: FastifyInstance, options: AuditRoutesOptions): Promise<void> {
  const { scanner, topics, auditCodec, clock, bounds } = options;
  app.get<{ Querystring: Static<typeof Query> }>(
    '/v1/audit',
    {
      config: { permission: 'read' },
      schema: {
        tags: ['audit'],
        summary: 'Search the audit trail by actor, target, action and time, oldest first',
        querystring: Query,
        response: { 200: Type.Object({ records: Type.Array(AuditView), next: Type.Union([Type.String(), Type.Null()]), scanned: Type.Integer() }), ...errorResponses },
      },
    },
    async (request) => {
      const { actor, target, action } = request.query;
      const limit = request.query.limit ?? 100;
      const { fromMs, toMs } = timeRange(request.query, clock());
      const partitions = Math.max(1, await scanner.partitions(topics.audit));
      let [partition, offset] = cursorOf(request.query.after, partitions);
      // The range is found by Kafka timestamps; a record's own time decides (it is never after its timestamp).
      const wanted = (r: AuditRecord) =>
        r.at >= fromMs &&
        r.at < toMs &&
        (actor === undefined || r.actor === actor) &&
        (target === undefined || r.target === target) &&
        (action === undefined || r.action === action || r.action.startsWith(`${action}.`));
      const records: AuditRecord[] = [];
      let scanned = 0;
      for (; partition < partitions; partition++, offset = undefined) {
        const page = await scanner.scan({
          topic: topics.audit,
          partition,
          fromMs,
          toMs,
          startOffset: offset,
          limit: limit - records.length,
          maxScanned: bounds.maxScanned - scanned,
          budgetMs: bounds.budgetMs,
          match: (_key, value) => {
            if (value === null) return undefined;
            const record = auditCodec.decode(value);
            return wanted(record) ? record : undefined;
          },
        });
        records.push(...page.items);
        scanned += page.scanned;
        if (page.next !== null) return { records, next: pageCursor(partition, page.next), scanned };
        if (records.length >= limit || scanned >= bounds.maxScanned) return { records, next: partition + 1 < partitions ? `${partition + 1}:0` : null, scanned };
      }
      return { records, next: null, scanned };
    },
  );
}

function cursorOf(after: string | undefined, partitions: number): [number, number | undefined] {
  if (after === undefined) return [0, undefined];
  const match = /^(\d{1,6}):(\d{1,18})$/.exec(after);
  if (!match || Number(match[1]) >= partitions)
    throw new ProblemError('INVALID_REQUEST', `after: not a cursor of this query (${after})`, [{ path: 'after', message: 'use the `next` of the previous page' }]);
  return [Number(match[1]), Number(match[2])];
}
