import type { Ban } from '@banstream/schemas';

export interface BanQuery {
  /** `ip`, `cidr`, `user`…: the subject's first scope. */
  scope?: string;
  /** The start of the subject (`user:42`) or of its value, after the scope (`203.0.113.`). */
  subject?: string;
  policy?: string;
  /** `aggregator` or `manual`. */
  origin?: string;
  /** Also bans past their expiry whose tombstone has not arrived yet. */
  includeExpired?: boolean;
  /** Paging: subjects after this one. */
  after?: string;
  limit: number;
}

export interface BanPage {
  bans: Ban[];
  /** Every match, this page and the others. */
  total: number;
  /** The cursor of the following page (its `after`), null on the last. */
  next: string | null;
}

/**
 * Bans matching every given filter, in subject order, one page; `next` is the cursor of
 * the following page. One pass, keeping only the `limit + 1` smallest subjects after the
 * cursor (the extra one says whether a page follows). The service answers from BanIndex
 * (ban-index.ts); this pass over every ban is the reference it is held to, itself held to
 * the sort-everything one (ban-search.test.ts).
 */
export function searchBans(bans: Iterable<Ban>, query: BanQuery, nowMs: number): BanPage {
  const { after, limit } = query;
  const smallest: Ban[] = [];
  let total = 0;
  for (const b of bans) {
    if (!matches(b, query, nowMs)) continue;
    total++;
    if (after !== undefined && !(b.subject > after)) continue;
    if (smallest.length > limit && !(b.subject < smallest[limit]!.subject)) continue;
    smallest.splice(insertionPoint(smallest, b.subject), 0, b);
    if (smallest.length > limit + 1) smallest.pop();
  }
  const page = smallest.slice(0, limit);
  return { bans: page, total, next: smallest.length > limit ? page[page.length - 1]!.subject : null };
}

function matches(b: Ban, query: BanQuery, nowMs: number): boolean {
  if (!query.includeExpired && b.expiresAt <= nowMs) return false;
  if (query.scope !== undefined && !b.subject.startsWith(`${query.scope}:`)) return false;
  if (query.subject !== undefined && !subjectStartsWith(b.subject, query.subject)) return false;
  if (query.policy !== undefined && b.policyId !== query.policy) return false;
  if (query.origin !== undefined && b.origin !== query.origin) return false;
  return true;
}

/** The subject, or its value after the first colon, starts with `text`. */
export function subjectStartsWith(subject: string, text: string): boolean {
  return subject.startsWith(text) || subject.slice(subject.indexOf(':') + 1).startsWith(text);
}

/** Where `subject` goes in the sorted list (binary search, after equal subjects). */
function insertionPoint(sorted: readonly Ban[], subject: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]!.subject <= subject) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
