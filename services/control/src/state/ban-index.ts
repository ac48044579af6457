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
 * Expiry moves bans between groups: the bans held by second of expiry say which bans
 * crossed their expiry since the previous query (or, should the clock step back, which
 * are live again). searchBans (ban-search.ts) is the plain reference it is tested
 * against (ban-index.test.ts).
 */
export class BanIndex {
  /** By scope, policy, origin, then live [0] and expired [1]: nested maps, as a joined key would cost a string per ban loaded. */
  private readonly groups = new Map<string | null, Map<string, Map<string, [Group | undefined, Group | undefined]>>>();
  /** Bans by the second of their expiry, and those seconds in order: no string is compared to place a ban in time. */
  private readonly bySecond = new Map<number, Set<Ban>>();
  private readonly seconds: SortedList<number>;
  private count = 0;
  /** Bans expiring at or before this time sit in the expired groups. */
  private sweptTo = Number.NEGATIVE_INFINITY;

  /** `maxChunk`: of each sorted list (sorted-list.ts); tests make it small. */
  constructor(private readonly maxChunk?: number) {
    this.seconds = new SortedList<number>((a, b) => a - b, maxChunk);
  }

  get size(): number {
    return this.count;
  }

  /** Replaces `previous` (the ban held for the subject, if any) with `next` (null: lifted). Both must have the subject. */
  replace(previous: Ban | undefined, next: Ban | null): void {
    if (previous !== undefined) {
      this.leave(previous, this.expired(previous));
      const second = secondOf(previous);
      const held = this.bySecond.get(second);
      if (held?.delete(previous)) this.count--;
      if (held?.size === 0) {
        this.bySecond.delete(second);
        this.seconds.delete(second);
      }
    }
    if (next !== null) {
      this.join(next, this.expired(next));
      const second = secondOf(next);
      let held = this.bySecond.get(second);
      if (held === undefined) {
        this.bySecond.set(second, (held = new Set()));
        this.seconds.add(second);
      }
      held.add(next);
      this.count++;
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
    const pick = <K, V>(map: Map<K, V> | undefined, key: K | undefined): Iterable<V> => (map === undefined ? [] : key === undefined ? map.values() : map.has(key) ? [map.get(key)!] : []);
    for (const policies of pick(this.groups, query.scope))
      for (const origins of pick(policies, query.policy))
        for (const [live, expired] of pick(origins, query.origin)) {
          if (live !== undefined) out.push(live);
          if (expired !== undefined && query.includeExpired) out.push(expired);
        }
    return out;
  }

  /**
   * Moves the bans whose expiry lies between the last sweep and `nowMs` to the groups of
   * their new state. The seconds at both ends are looked at whole: while a burst of bans
   * sharing one second of expiry crosses it (a second or two), each query passes over that
   * burst, not over every ban.
   */
  private sweep(nowMs: number): void {
    if (nowMs === this.sweptTo || Number.isNaN(nowMs)) return;
    const [low, high, nowExpired] = nowMs > this.sweptTo ? [this.sweptTo, nowMs, true] : [nowMs, this.sweptTo, false];
    const crossing: Ban[] = [];
    const last = Math.floor(high / 1000);
    for (const second of this.seconds.from((s) => s < Math.floor(low / 1000))) {
      if (second > last) break;
      for (const ban of this.bySecond.get(second)!) if (ban.expiresAt > low && ban.expiresAt <= high) crossing.push(ban);
    }
    for (const ban of crossing) {
      this.leave(ban, !nowExpired);
      this.join(ban, nowExpired);
    }
    this.sweptTo = nowMs;
  }

  private join(ban: Ban, expired: boolean): void {
    const scope = scopeOf(ban.subject);
    let policies = this.groups.get(scope);
    if (policies === undefined) this.groups.set(scope, (policies = new Map()));
    let origins = policies.get(ban.policyId);
    if (origins === undefined) policies.set(ban.policyId, (origins = new Map()));
    let pair = origins.get(ban.origin);
    if (pair === undefined) origins.set(ban.origin, (pair = [undefined, undefined]));
    const slot = expired ? 1 : 0;
    let group = pair[slot];
    if (group === undefined) pair[slot] = group = { scope, policy: ban.policyId, origin: ban.origin, expired, bans: new SortedList(bySubject, this.maxChunk) };
    group.bans.add(ban);
  }

  private leave(ban: Ban, expired: boolean): void {
    const scope = scopeOf(ban.subject);
    const policies = this.groups.get(scope);
    const origins = policies?.get(ban.policyId);
    const pair = origins?.get(ban.origin);
    const group = pair?.[expired ? 1 : 0];
    if (group === undefined) return;
    group.bans.delete(ban);
    // Groups come and go with the combinations held, so an old policy leaves nothing behind.
    if (group.bans.size > 0) return;
    pair![expired ? 1 : 0] = undefined;
    if (pair![expired ? 0 : 1] !== undefined) return;
    origins!.delete(ban.origin);
    if (origins!.size > 0) return;
    policies!.delete(ban.policyId);
    if (policies!.size === 0) this.groups.delete(scope);
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
const secondOf = (ban: Ban) => Math.floor(ban.expiresAt / 1000);

function scopeOf(subject: string): string | null {
  const colon = subject.indexOf(':');
  return colon < 0 ? null : subject.slice(0, colon);
}

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
