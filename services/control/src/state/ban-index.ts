import type { Ban } from '@banstream/schemas';
import type { BanQuery, BanPage } from './ban-search.js';
import { SortedList } from './sorted-list.js';

/**
 * The bans held, kept ready for GET /v1/bans: in groups of the same scope, policy,
 * origin and expiry state, each a list sorted by subject. A query picks the groups its
 * filters name (scope, policy, origin, live or also expired), finds the subject prefix
 * and the cursor in each by binary search, and merges the groups' next subjects: a page
 * costs a few binary searches per group and the page's own rows, whatever the number of
 * bans, and the total is the sum of the groups' sizes (or of their prefix ranges). The
 * groups are as many as the scope, policy and origin combinations held, not the bans.
 *
 * Expiry moves bans between groups: a second list in expiry order says which bans
 * crossed their expiry since the previous query (or, should the clock step back, which
 * are live again). searchBans (ban-search.ts) is the plain reference it is tested
 * against (ban-index.test.ts).
 */
export class BanIndex {
  private readonly groups = new Map<string, Group>();
  private readonly byExpiry: SortedList<Ban>;
  /** Bans expiring at or before this time sit in the expired groups. */
  private sweptTo = Number.NEGATIVE_INFINITY;

  /** `maxChunk`: of each sorted list (sorted-list.ts); tests make it small. */
  constructor(private readonly maxChunk?: number) {
    this.byExpiry = new SortedList<Ban>(byExpiryThenSubject, maxChunk);
  }

  get size(): number {
    return this.byExpiry.size;
  }

  /** Replaces `previous` (the ban held for the subject, if any) with `next` (null: lifted). Both must have the subject. */
  replace(previous: Ban | undefined, next: Ban | null): void {
    if (previous !== undefined) {
      this.leave(previous, this.expired(previous));
      this.byExpiry.delete(previous);
    }
    if (next !== null) {
      this.join(next, this.expired(next));
      this.byExpiry.add(next);
    }
  }

  /** One page of the bans matching `query` at `nowMs`, as searchBans answers. */
  search(query: BanQuery, nowMs: number): BanPage {
    const groups = this.matching(query, nowMs);
    let total = 0;
    const heads: Head[] = [];
    for (const group of groups) {
      const ranges = prefixRanges(group, query.subject);
      for (const [from, to] of ranges) total += to - from;
      const start = query.after === undefined ? 0 : group.bans.rank((b) => b.subject <= query.after!);
      const rows = rowsOf(group.bans, ranges, start);
      const first = rows.next();
      if (!first.done) heads.push({ ban: first.value, rows });
    }
    const page = mergeSmallest(heads, query.limit + 1);
    const more = page.length > query.limit;
    if (more) page.pop();
    return { bans: page, total, next: more ? page[page.length - 1]!.subject : null };
  }

  /** Bans of `origin` whose expiry has passed at `nowMs` (their tombstone not read yet), in subject order within each group. */
  expiredOf(origin: string, nowMs: number): Ban[] {
    const out: Ban[] = [];
    for (const group of this.matching({ origin, includeExpired: true, limit: 0 }, nowMs)) if (group.expired) out.push(...group.bans.fromRank(0));
    return out;
  }

  private expired(ban: Ban): boolean {
    return ban.expiresAt <= this.sweptTo;
  }

  private matching(query: BanQuery, nowMs: number): Group[] {
    if (query.scope?.includes(':')) throw new RangeError(`a scope holds no colon (got ${JSON.stringify(query.scope)})`);
    this.sweep(nowMs);
    const out: Group[] = [];
    for (const g of this.groups.values()) {
      if (g.expired && !query.includeExpired) continue;
      if (query.scope !== undefined && g.scope !== query.scope) continue;
      if (query.policy !== undefined && g.policy !== query.policy) continue;
      if (query.origin !== undefined && g.origin !== query.origin) continue;
      out.push(g);
    }
    return out;
  }

  /** Moves the bans whose expiry lies between the last sweep and `nowMs` to the groups of their new state. */
  private sweep(nowMs: number): void {
    if (nowMs === this.sweptTo || Number.isNaN(nowMs)) return;
    const [low, high, nowExpired] = nowMs > this.sweptTo ? [this.sweptTo, nowMs, true] : [nowMs, this.sweptTo, false];
    const crossing: Ban[] = [];
    for (const ban of this.byExpiry.from((b) => b.expiresAt <= low)) {
      if (ban.expiresAt > high) break;
      crossing.push(ban);
    }
    for (const ban of crossing) {
      this.leave(ban, !nowExpired);
      this.join(ban, nowExpired);
    }
    this.sweptTo = nowMs;
  }

  private join(ban: Ban, expired: boolean): void {
    const scope = scopeOf(ban.subject);
    const key = groupKey(scope, ban, expired);
    let group = this.groups.get(key);
    if (group === undefined) {
      group = { scope, policy: ban.policyId, origin: ban.origin, expired, bans: new SortedList(bySubject, this.maxChunk) };
      this.groups.set(key, group);
    }
    group.bans.add(ban);
  }

  private leave(ban: Ban, expired: boolean): void {
    const key = groupKey(scopeOf(ban.subject), ban, expired);
    const group = this.groups.get(key);
    if (group === undefined) return;
    group.bans.delete(ban);
    // Groups come and go with the combinations held, so an old policy leaves nothing behind.
    if (group.bans.size === 0) this.groups.delete(key);
  }
}

interface Group {
  /** The text before the subject's first colon; null for a subject without one. */
  scope: string | null;
  policy: string;
  origin: string;
  expired: boolean;
  bans: SortedList<Ban>;
}

interface Head {
  ban: Ban;
  rows: Iterator<Ban>;
}

const bySubject = (a: Ban, b: Ban) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0);
const byExpiryThenSubject = (a: Ban, b: Ban) => (a.expiresAt < b.expiresAt ? -1 : a.expiresAt > b.expiresAt ? 1 : bySubject(a, b));

function scopeOf(subject: string): string | null {
  const colon = subject.indexOf(':');
  return colon < 0 ? null : subject.slice(0, colon);
}

// JSON keeps any policy or origin text (a separator could be part of one) from naming two groups alike.
const groupKey = (scope: string | null, ban: Ban, expired: boolean) => JSON.stringify([scope, ban.policyId, ban.origin, expired]);

/**
 * The ranks [from, to) of a group's subjects matching the subject filter, in order and
 * disjoint: those starting with the text, and in a scoped group those whose value (after
 * the colon) does; the whole group without a filter.
 */
function prefixRanges(group: Group, text: string | undefined): [number, number][] {
  const { bans } = group;
  if (text === undefined) return [[0, bans.size]];
  const prefixes = group.scope === null ? [text] : [text, `${group.scope}:${text}`];
  const ranges = prefixes
    .map((p): [number, number] => [bans.rank((b) => b.subject < p), bans.rank((b) => b.subject < p || b.subject.startsWith(p))])
    .filter(([from, to]) => from < to)
    .sort((a, b) => a[0] - b[0]);
  // Two prefix ranges either nest or are apart.
  const merged: [number, number][] = [];
  for (const range of ranges) {
    const last = merged[merged.length - 1];
    if (last !== undefined && range[0] <= last[1]) last[1] = Math.max(last[1], range[1]);
    else merged.push(range);
  }
  return merged;
}

/** The group's rows in `ranges` from rank `start` on. */
function* rowsOf(bans: SortedList<Ban>, ranges: readonly [number, number][], start: number): Generator<Ban, void, undefined> {
  for (const [from, to] of ranges) {
    if (to <= start) continue;
    const first = Math.max(from, start);
    let left = to - first;
    for (const ban of bans.fromRank(first)) {
      if (left-- === 0) break;
      yield ban;
    }
  }
}

/** The `n` smallest subjects of the groups' sorted rows: a binary heap on each group's next row. */
function mergeSmallest(heads: Head[], n: number): Ban[] {
  const out: Ban[] = [];
  const less = (i: number, j: number) => heads[i]!.ban.subject < heads[j]!.ban.subject;
  const down = (from: number) => {
    let i = from;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heads.length && less(l, m)) m = l;
      if (r < heads.length && less(r, m)) m = r;
      if (m === i) return;
      [heads[i], heads[m]] = [heads[m]!, heads[i]!];
      i = m;
    }
  };
  for (let i = (heads.length >>> 1) - 1; i >= 0; i--) down(i);
  while (out.length < n && heads.length > 0) {
    const top = heads[0]!;
    out.push(top.ban);
    const next = top.rows.next();
    if (next.done) {
      heads[0] = heads[heads.length - 1]!;
      heads.pop();
    } else top.ban = next.value;
    down(0);
  }
  return out;
}
