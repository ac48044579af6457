import type { Ban } from '@banstream/schemas';

export interface BanQuery {
  /** `ip`, `cidr`, `user`…: the subject's first scope. */
  scope?: string;
  /** A part of the subject text (`203.0.113.`, `user:42`). */
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

/**
 * Bans matching every given filter, in subject order, one page; `next` is the cursor of
 * the following page. One pass, keeping only the `limit + 1` smallest subjects after the
 * cursor (the extra one says whether a page follows): a page of a million bans costs a
 * scan, not a sort of them all. ban-search.test.ts holds it to the sort-everything
 * reference on generated sets and queries.
 */
export function searchBans(bans: Iterable<Ban>, query: BanQuery, nowMs: number): { bans: Ban[]; total: number; next: string | null } {
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
  if (query.subject !== undefined && !b.subject.includes(query.subject)) return false;
  if (query.policy !== undefined && b.policyId !== query.policy) return false;
  if (query.origin !== undefined && b.origin !== query.origin) return false;
  return true;
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
