import type { OffenderHistory } from '@banstream/core';
import type { Ban } from '@banstream/schemas';

/**
 * What the bans topic says, as this instance has read it, plus what it has just
 * published itself. The topic is keyed by subject, so a subject holds one ban at a
 * time: a new ban replaces the held one only if it is stronger (enforced over
 * preview, or ending later). Because every decision is checked against the ledger,
 * a replay after a crash or a rebalance re-derives bans without publishing a
 * second, different ban for a subject that is already banned.
 */
export class BanLedger {
  private readonly held = new Map<string, Ban>();
  /** Per `policyId|subject`: the escalation level reached and when that ban ended. */
  private readonly offenders = new Map<string, OffenderHistory>();
  /**
   * Subject → the ids of its bans (the last HISTORY_IDS) whose ban-history records this
   * instance has put in its outbox, kept until the subject's ban ends: not cleared when
   * the topic shows another ban, since this instance may have admitted a second one
   * before reading its first back.
   */
  private readonly historySent = new Map<string, string[]>();

  get size(): number {
    return this.held.size;
  }

  /** Applies a record of the bans topic (null: the subject was unbanned). */
  observe(subject: string, ban: Ban | null): void {
    if (ban === null) {
      this.held.delete(subject);
      this.historySent.delete(subject);
      return;
    }
    this.held.set(subject, ban);
    this.remember(ban);
  }

  /** The ban held for a subject, if any, expired or not. */
  get(subject: string): Ban | undefined {
    return this.held.get(subject);
  }

  historyOf(policyId: string, subject: string): OffenderHistory | undefined {
    return this.offenders.get(`${policyId}|${subject}`);
  }

  /**
   * True, and recorded, if `ban` should be published: nothing is held for its
   * subject at its start, or what is held is weaker. False for the very ban already
   * held (same id), which a replay derives again.
   */
  admit(ban: Ban): boolean {
    const held = this.held.get(ban.subject);
    if (held && held.expiresAt > ban.startedAt && !weaker(held, ban)) return false;
    this.held.set(ban.subject, ban);
    this.recordHistory(ban);
    this.remember(ban);
    return true;
  }

  /**
   * True, and recorded, if the held `ban`'s history record was not put in an outbox by
   * this instance: a replay after a crash re-derives the crossing of a ban it read from
   * the bans topic, whose history record may not have been written (its partition of
   * the send failed, the ban's did not). False once per ban after that.
   */
  claimHistory(ban: Ban): boolean {
    if (this.historySent.get(ban.subject)?.includes(ban.banId)) return false;
    this.recordHistory(ban);
    return true;
  }

  private recordHistory(ban: Ban): void {
    const ids = this.historySent.get(ban.subject);
    if (ids === undefined) this.historySent.set(ban.subject, [ban.banId]);
    else if (ids.push(ban.banId) > HISTORY_IDS) ids.shift();
  }

  /**
   * Removes and returns the bans ended by `nowMs` that `owns` says this instance
   * must lift; the caller publishes their tombstones. Manual bans are lifted by
   * the control plane, not here.
   */
  takeExpired(nowMs: number, owns: (ban: Ban) => boolean): Ban[] {
    const ended: Ban[] = [];
    for (const [subject, ban] of this.held) {
      if (ban.expiresAt <= nowMs && ban.origin === 'aggregator' && owns(ban)) {
        this.held.delete(subject);
        this.historySent.delete(subject);
        ended.push(ban);
      }
    }
    return ended;
  }

  private remember(ban: Ban): void {
    const key = `${ban.policyId}|${ban.subject}`;
    const known = this.offenders.get(key);
    if (!known || known.lastBanEndsAt < ban.expiresAt) this.offenders.set(key, { level: ban.escalationLevel, lastBanEndsAt: ban.expiresAt });
  }
}

/** Ban ids remembered per subject for claimHistory: a subject's bans replaced while it stays banned. */
const HISTORY_IDS = 4;

function weaker(held: Ban, candidate: Ban): boolean {
  if (held.banId === candidate.banId) return false;
  if (held.preview !== candidate.preview) return held.preview;
  return held.expiresAt < candidate.expiresAt;
}
