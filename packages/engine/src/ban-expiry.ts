import type { Ban } from '@banstream/schemas';
import type { BanLedger } from './ban-ledger.js';
import type { Outbox } from './outbox.js';

/**
 * Lifts the held bans that end, in two steps one call apart: a call puts in the outbox
 * the ban-history records ("expire", at the ban's end) of the bans ended by then that
 * `owns` gives this instance, and the next call their tombstones. The caller flushes
 * the outbox between calls into a chain of publications that each start once the one
 * before is acknowledged (DecisionFlusher), so a tombstone is never sent before its
 * ban's record is on Kafka, and a tick still makes one publication. A crash between the
 * two leaves the ended ban on the bans topic, and the next instance lifts it again (the
 * same record: the history API shows a repeat once); a tombstone first would leave
 * nothing to find the lost record by. A subject banned again in between keeps its new
 * ban, and one whose partition moved is left to its new owner: no tombstone.
 */
export class BanLifter {
  /** Ended bans whose history records went in an earlier call's outbox. */
  private ended: Ban[] = [];

  /** Returns the tombstones put in `out`. */
  lift(ledger: BanLedger, nowMs: number, owns: (ban: Ban) => boolean, out: Outbox): number {
    let lifted = 0;
    for (const ban of this.ended) {
      if (ledger.get(ban.subject) !== undefined || !owns(ban)) continue;
      out.bans.push({ key: ban.subject, value: null });
      lifted++;
    }
    this.ended = ledger.takeExpired(nowMs, owns);
    for (const ban of this.ended) out.history.push({ key: ban.subject, value: { subject: ban.subject, action: 'expire', at: ban.expiresAt, actor: null, ban } });
    return lifted;
  }
}
