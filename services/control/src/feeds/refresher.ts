import { randomUUID } from 'node:crypto';
import { banId } from '@banstream/core';
import { ProblemError } from '@banstream/platform';
import { FEED_ORIGIN_PREFIX, type Ban, type FeedRecord } from '@banstream/schemas';
import type { MinPrefix } from '../guards/index.js';
import type { BatchChange, ChangeContext, ChangeWriter } from '../state/change-writer.js';
import type { ControlState } from '../state/control-state.js';
import { FeedParseError, parseFeed, type FeedFormat } from './parse.js';
import { planRefresh } from './plan.js';
import { FeedAddressError } from './address-guard.js';
import { checkSourceAddress, FeedSourceError, readSource, type SourceLimits } from './source.js';

/** Records per produce request: a few hundred KB of bans, well under a broker's message.max.bytes. */
export const FEED_BATCH = 2_000;

export interface FeedLimits extends SourceLimits {
  maxLines: number;
  /** Shares, 0 to 1. */
  maxInvalidShare: number;
  maxLiftShare: number;
  minPrefix: MinPrefix;
  /** Told of each refresh's outcome: ok, the refusal's code, or failed (Kafka did not take it). */
  onRefreshed?(outcome: string): void;
}

/** What a refresh did, as `lastRefresh` keeps it and sync answers. */
export type RefreshOutcome =
  | {
      at: number;
      ok: true;
      entries: number;
      added: number;
      renewed: number;
      lifted: number;
      skipped: { allowlisted: number; bannedOtherwise: number; tooWide: number };
      invalid: number;
      duplicates: number;
      tooWide?: string[];
      forced?: boolean;
    }
  | { at: number; ok: false; code: RefusalCode; error: string; kept: number };

export type RefusalCode = 'FEED_SOURCE_FAILED' | 'FEED_ADDRESS_REFUSED' | 'FEED_INVALID' | 'FEED_LIFT_REFUSED';

export const originOf = (name: string) => `${FEED_ORIGIN_PREFIX}${name}`;

export function formatOf(feed: FeedRecord): FeedFormat {
  return feed.format === 'csv' ? { kind: 'csv', column: feed.csvColumn ?? '1', header: feed.csvHeader } : { kind: 'netset' };
}

/** The last refresh's outcome, or undefined before the first (or if the text is not one). */
export function lastRefreshOf(feed: FeedRecord): RefreshOutcome | undefined {
  if (feed.lastRefresh === null) return undefined;
  try {
    return JSON.parse(feed.lastRefresh) as RefreshOutcome;
  } catch {
    return undefined;
  }
}

/**
 * Refreshes feeds into bans: read the source (bounded), parse, plan against the bans
 * held, refuse what looks like a broken source, write the rest in batches each with
 * its audit record, and keep the outcome on the feed's record (every instance
 * schedules from it). One refresh (or removal) of a feed at a time per instance.
 */
export class FeedRefresher {
  private readonly running = new Map<string, Promise<unknown>>();

  constructor(
    private readonly state: ControlState,
    private readonly writer: ChangeWriter,
    private readonly clock: () => number,
    private readonly limits: FeedLimits,
  ) {}

  /** Throws FeedAddressError for a source the address policy refuses already (a literal address, a name resolving to one). */
  checkAddress(source: string): Promise<void> {
    return checkSourceAddress(source, this.limits);
  }

  /** Feeds whose next refresh is due. */
  due(now: number): string[] {
    return [...this.state.feeds.values()].filter((f) => !this.running.has(f.name) && (lastRefreshOf(f)?.at ?? Number.NEGATIVE_INFINITY) + f.refreshMs <= now).map((f) => f.name);
  }

  /** Runs `work` after the feed's refresh or removal in progress, if any. */
  private exclusive<T>(name: string, work: () => Promise<T>): Promise<T> {
    const before = this.running.get(name) ?? Promise.resolve();
    const run = before.then(work, work);
    const settled = run.catch(() => undefined);
    this.running.set(name, settled);
    void settled.then(() => {
      if (this.running.get(name) === settled) this.running.delete(name);
    });
    return run;
  }

  /** Refreshes one feed; `force` lets it lift more than CONTROL_FEED_MAX_LIFT_PERCENT (or everything). */
  refresh(name: string, ctx: ChangeContext, force = false): Promise<RefreshOutcome> {
    const run = this.exclusive(name, () => this.refreshNow(name, ctx, force));
    run.then(
      (o) => this.limits.onRefreshed?.(o.ok ? 'ok' : o.code),
      (e: unknown) => e instanceof ProblemError || this.limits.onRefreshed?.('failed'),
    );
    return run;
  }

  private async refreshNow(name: string, ctx: ChangeContext, force: boolean): Promise<RefreshOutcome> {
    const feed = this.state.feeds.get(name);
    if (!feed) throw new ProblemError('NOT_FOUND', `no feed ${name}`);
    const origin = originOf(name);
    const kept = () => [...this.state.bans.values()].filter((b) => b.origin === origin).length;
    let parsed;
    try {
      const text = await readSource(feed.source, this.limits);
      parsed = parseFeed(text, formatOf(feed), { maxLines: this.limits.maxLines, maxEntries: feed.maxEntries });
    } catch (error) {
      if (error instanceof FeedAddressError) return this.refuse(feed, 'FEED_ADDRESS_REFUSED', error.message, kept(), ctx);
      if (error instanceof FeedSourceError) return this.refuse(feed, 'FEED_SOURCE_FAILED', error.message, kept(), ctx);
      if (error instanceof FeedParseError) return this.refuse(feed, 'FEED_INVALID', error.message, kept(), ctx);
      throw error;
    }
    if (parsed.invalid > parsed.dataLines * this.limits.maxInvalidShare) {
      const share = Math.round((100 * parsed.invalid) / parsed.dataLines);
      const message = `${parsed.invalid} of ${parsed.dataLines} lines (${share}%) are not an address or network (lines ${parsed.invalidAt.join(', ')}${parsed.invalid > parsed.invalidAt.length ? ', …' : ''}); at most ${Math.round(this.limits.maxInvalidShare * 100)}% may be (CONTROL_FEED_MAX_INVALID_PERCENT)`;
      return this.refuse(feed, 'FEED_INVALID', message, kept(), ctx);
    }
    return this.writer.serial(async () => {
      const now = this.clock();
      const plan = planRefresh({
        origin,
        entries: parsed.entries,
        bans: this.state.bans,
        allowlist: this.state.allowlist.values(),
        minPrefix: this.limits.minPrefix,
        wideAllowed: feed.forced !== null,
        now,
        renewWithin: 2 * feed.refreshMs,
      });
      const listed = parsed.entries.length;
      if (!force && plan.held > 0 && (listed === 0 || plan.lift.length > plan.held * this.limits.maxLiftShare)) {
        const why =
          listed === 0
            ? `the source lists no entries, and the feed holds ${plan.held} bans`
            : `this refresh would lift ${plan.lift.length} of the feed's ${plan.held} bans, more than ${Math.round(this.limits.maxLiftShare * 100)}% (CONTROL_FEED_MAX_LIFT_PERCENT)`;
        return this.refuseNow(feed, 'FEED_LIFT_REFUSED', `${why}: an empty or truncated download looks like this; sync with force if the list really shrank`, plan.held, ctx, now);
      }
      const outcome: RefreshOutcome = {
        at: now,
        ok: true,
        entries: plan.held - plan.lift.length + plan.add.length,
        added: plan.add.length,
        renewed: plan.renew.length,
        lifted: plan.lift.length,
        skipped: plan.skipped,
        invalid: parsed.invalid,
        duplicates: parsed.duplicates,
        ...(plan.tooWideShown.length > 0 ? { tooWide: plan.tooWideShown } : {}),
        ...(force ? { forced: true } : {}),
      };
      const ban = (subject: string, startedAt: number): Ban => ({
        banId: banId(origin, subject, now),
        subject,
        policyId: origin,
        reason: feed.reason,
        evidenceCount: 0,
        windowSeconds: 0,
        startedAt,
        expiresAt: now + feed.banMs,
        preview: false,
        escalationLevel: 0,
        origin,
        httpStatus: feed.httpStatus,
        createdBy: null,
      });
      const changes: BatchChange[] = [
        ...plan.add.map((s): BatchChange => ({ kind: 'ban', key: s, value: ban(s, now) })),
        ...plan.renew.map((s): BatchChange => ({ kind: 'ban', key: s, value: ban(s, this.state.bans.get(s)?.startedAt ?? now) })),
        ...plan.lift.map((b): BatchChange => ({ kind: 'ban', key: b.subject, value: null })),
      ];
      const record: FeedRecord = { ...feed, lastRefresh: JSON.stringify(outcome) };
      await this.writeInParts(
        changes,
        { kind: 'feed', key: name, value: record },
        'feed.refresh',
        name,
        outcome,
        ctx,
        force ? 'lifted more than CONTROL_FEED_MAX_LIFT_PERCENT allows (sync with force)' : null,
      );
      return outcome;
    });
  }

  /**
   * Removes a feed: lifts every ban it holds, then tombstones its record, in batches
   * each audited as `feed.remove`. Bans of the feed that another origin has since
   * replaced are theirs and stay.
   */
  remove(name: string, ctx: ChangeContext): Promise<{ removed: string; lifted: number }> {
    return this.exclusive(name, () =>
      this.writer.serial(async () => {
        const feed = this.state.feeds.get(name);
        if (!feed) throw new ProblemError('NOT_FOUND', `no feed ${name}`);
        const origin = originOf(name);
        const lifts = [...this.state.bans.values()].filter((b) => b.origin === origin).map((b): BatchChange => ({ kind: 'ban', key: b.subject, value: null }));
        await this.writeInParts(lifts, { kind: 'feed', key: name, value: null }, 'feed.remove', name, { lifted: lifts.length, feed }, ctx, null);
        return { removed: name, lifted: lifts.length };
      }),
    );
  }

  private refuse(feed: FeedRecord, code: RefusalCode, error: string, kept: number, ctx: ChangeContext): Promise<RefreshOutcome> {
    return this.writer.serial(() => this.refuseNow(feed, code, error, kept, ctx, this.clock()));
  }

  /** A refused refresh changes no ban: it is audited, kept as the feed's last outcome, and answered as a problem. */
  private async refuseNow(feed: FeedRecord, code: RefusalCode, error: string, kept: number, ctx: ChangeContext, now: number): Promise<RefreshOutcome> {
    const outcome: RefreshOutcome = { at: now, ok: false, code, error, kept };
    const current = this.state.feeds.get(feed.name);
    // Removed while its source was read: nothing to record it on.
    if (current)
      await this.writer.writeBatch(
        [{ kind: 'feed', key: feed.name, value: { ...current, lastRefresh: JSON.stringify(outcome) } }],
        { action: 'feed.refresh', target: feed.name, before: null, after: JSON.stringify(outcome) },
        ctx,
      );
    return outcome;
  }

  /** Changes in batches of FEED_BATCH, each with an audit record of its part; the last carries the feed's record and the whole outcome. */
  private async writeInParts(changes: BatchChange[], last: BatchChange, action: string, name: string, outcome: object, ctx: ChangeContext, forced: string | null): Promise<void> {
    const parts = Math.max(1, Math.ceil(changes.length / FEED_BATCH));
    const refreshId = randomUUID();
    for (let part = 1; part <= parts; part++) {
      const slice = changes.slice((part - 1) * FEED_BATCH, part * FEED_BATCH);
      const written = slice.filter((c) => c.value !== null).length;
      const partSummary = part === parts ? { refreshId, part, parts, ...outcome } : { refreshId, part, parts, written, lifted: slice.length - written };
      const batch = part === parts ? [...slice, last] : slice;
      await this.writer.writeBatch(batch, { action, target: name, before: null, after: JSON.stringify(partSummary) }, { ...ctx, forced });
    }
  }
}
