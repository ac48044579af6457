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

/** Bans matching every given filter, in subject order, one page; `next` is the cursor of the following page. */
export function searchBans(bans: Iterable<Ban>, query: BanQuery, nowMs: number): { bans: Ban[]; total: number; next: string | null } {
  const matching: Ban[] = [];
  for (const b of bans) {
    if (!query.includeExpired && b.expiresAt <= nowMs) continue;
    if (query.scope !== undefined && !b.subject.startsWith(`${query.scope}:`)) continue;
    if (query.subject !== undefined && !b.subject.includes(query.subject)) continue;
    if (query.policy !== undefined && b.policyId !== query.policy) continue;
    if (query.origin !== undefined && b.origin !== query.origin) continue;
    matching.push(b);
  }
  matching.sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0));
  const from = query.after === undefined ? 0 : matching.findIndex((b) => b.subject > query.after!);
  const page = from < 0 ? [] : matching.slice(from, from + query.limit);
  const more = from >= 0 && from + query.limit < matching.length;
  return { bans: page, total: matching.length, next: more ? page[page.length - 1]!.subject : null };
}
