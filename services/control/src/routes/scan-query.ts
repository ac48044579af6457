import { Type } from '@sinclair/typebox';
import { ProblemError } from '@banstream/platform';

/** How much one history or audit page may read (CONTROL_QUERY_MAX_SCANNED, CONTROL_QUERY_BUDGET_MS). */
export interface QueryBounds {
  maxScanned: number;
  budgetMs: number;
}

export const TimeRange = {
  since: Type.Optional(Type.Integer({ minimum: 0, description: 'from this time (ms since the epoch, inclusive); default: the start of the retention' })),
  until: Type.Optional(Type.Integer({ minimum: 0, description: 'to this time (ms since the epoch, exclusive); default: now' })),
};

export function timeRange(query: { since?: number | undefined; until?: number | undefined }, now: number): { fromMs: number; toMs: number } {
  const fromMs = query.since ?? 0;
  const toMs = query.until ?? now + 1;
  if (toMs <= fromMs) throw new ProblemError('INVALID_REQUEST', `until (${toMs}) must be after since (${fromMs})`, [{ path: 'until', message: 'must be after since' }]);
  return { fromMs, toMs };
}

/** `partition:offset`, the next record a page would read; null at the range's end. */
export function pageCursor(partition: number, next: number | null): string | null {
  return next === null ? null : `${partition}:${next}`;
}

/** The offset of a cursor for `partition`; undefined without one. */
export function parseCursor(after: string | undefined, partition: number): number | undefined {
  if (after === undefined) return undefined;
  const match = /^(\d{1,6}):(\d{1,18})$/.exec(after);
  if (!match || Number(match[1]) !== partition)
    throw new ProblemError('INVALID_REQUEST', `after: not a cursor of this query (${after})`, [{ path: 'after', message: 'use the `next` of the previous page' }]);
  return Number(match[2]);
}
