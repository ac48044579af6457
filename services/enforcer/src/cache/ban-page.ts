import type { Ban } from '@banstream/schemas';

/** What GET /v1/bans asks for: live bans of one scope, if given, after a subject, `limit` of them. */
export interface BanPageQuery {
  scope?: string | undefined;
  after?: string | undefined;
  limit: number;
}

/**
 * One page of bans, picked from bans offered in any order and any number (a million):
 * the `limit` smallest subjects after `after` that are live at `nowMs` and of the
 * scope. Memory stays under 2 × limit bans: when the buffer fills, it is sorted and cut
 * to `limit`, and the last subject kept bounds what may still enter, so most offers
 * end at one comparison; O(N log limit) in all, never a sort of every ban. A subject
 * offered twice (a scan that saw an entry twice) is kept once.
 */
export class BanPage {
  private kept: Ban[] = [];
  /** Only subjects below it can still make the page (set once `limit` are kept). */
  private bound: string | undefined;
  private readonly prefix: string | undefined;
  private readonly after: string | undefined;

  constructor(
    private readonly nowMs: number,
    private readonly query: BanPageQuery,
  ) {
    if (!(Number.isInteger(query.limit) && query.limit > 0)) throw new RangeError(`a page of bans holds at least one: limit ${query.limit}`);
    this.prefix = query.scope ? `${query.scope}:` : undefined;
    this.after = query.after || undefined;
  }

  offer(ban: Ban): void {
    if (this.wants(ban.subject, ban.expiresAt)) this.take(ban);
  }

  /** Whether a ban on `subject` ending at `expiresAt` may make the page: then take() it (so a ban is made only if wanted). */
  wants(subject: string, expiresAt: number): boolean {
    if (this.bound !== undefined && !(subject < this.bound)) return false;
    if (this.after !== undefined && !(subject > this.after)) return false;
    if (!(expiresAt > this.nowMs)) return false;
    return this.prefix === undefined || subject.startsWith(this.prefix);
  }

  /** Keeps a ban wants() said yes to. */
  take(ban: Ban): void {
    this.kept.push(ban);
    if (this.kept.length >= 2 * this.query.limit) this.cut();
  }

  /** The page, in subject order. */
  bans(): Ban[] {
    this.cut();
    return this.kept;
  }

  private cut(): void {
    const sorted = this.kept.sort(bySubject);
    const unique: Ban[] = [];
    for (const ban of sorted) {
      if (unique.length > 0 && unique[unique.length - 1]!.subject === ban.subject) unique[unique.length - 1] = ban;
      else unique.push(ban);
      if (unique.length === this.query.limit) break;
    }
    this.kept = unique;
    if (unique.length === this.query.limit) this.bound = unique[unique.length - 1]!.subject;
  }
}

function bySubject(a: Ban, b: Ban): number {
  return a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0;
}
