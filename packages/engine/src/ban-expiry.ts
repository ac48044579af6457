import type { Ban } from '@banstream/schemas';
import type { BanLedger } from './ban-ledger.js';
import type { Outbox } from './outbox.js';

/**
 * Lifts the held bans ended by `nowMs` that `owns` gives this instance: first their
 * ban-history records ("expire", at the ban's end), flushed until Kafka has them, then
 * their tombstones. In that order, a crash between the two leaves the ban on the bans
 * topic, so the next instance lifts it again (the same record, `at` being the ban's end:
 * the history API shows a repeat once); a tombstone first would leave nothing to find
 * the lost expiry by. A subject banned again in between keeps its new ban, and one whose
 * partition this instance no longer owns is left to its new owner: no tombstone.
 * Returns the tombstones put in the outbox.
 */
export async function liftExpiredBans(ledger: BanLedger, nowMs: number, owns: (ban: Ban) => boolean, out: Outbox, flush: () => Promise<void>): Promise<number> {
  const ended = ledger.takeExpired(nowMs, owns);
  if (ended.length === 0) return 0;
  for (const ban of ended) out.history.push({ key: ban.subject, value: { subject: ban.subject, action: 'expire', at: ban.expiresAt, actor: null, ban } });
  await flush();
  let lifted = 0;
  for (const ban of ended) {
    if (ledger.get(ban.subject) !== undefined || !owns(ban)) continue;
    out.bans.push({ key: ban.subject, value: null });
    lifted++;
  }
  return lifted;
}
