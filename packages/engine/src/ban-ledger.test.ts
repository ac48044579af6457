import { describe, expect, it } from 'vitest';
import type { Ban } from '@banstream/schemas';
import { BanLedger } from './ban-ledger.js';

const ban = (over: Partial<Ban> = {}): Ban => ({
  banId: 'b1',
  subject: 'ip:192.0.2.1',
  policyId: 'p',
  reason: 'r',
  evidenceCount: 21,
  windowSeconds: 60,
  startedAt: 1_000,
  expiresAt: 61_000,
  preview: false,
  escalationLevel: 0,
  origin: 'aggregator',
  httpStatus: 403,
  createdBy: null,
  ...over,
});

describe('BanLedger', () => {
  it('admits a first ban and refuses the same or a weaker one while it holds', () => {
    const ledger = new BanLedger();
    expect(ledger.admit(ban())).toBe(true);
    expect(ledger.admit(ban())).toBe(false);
    expect(ledger.admit(ban({ banId: 'b2', startedAt: 2_000, expiresAt: 50_000 }))).toBe(false);
    expect(ledger.admit(ban({ banId: 'b3', startedAt: 2_000, preview: true, expiresAt: 900_000 }))).toBe(false);
  });

  it('lets a stronger ban replace the held one, and any ban once the held one is over', () => {
    const ledger = new BanLedger();
    ledger.admit(ban({ preview: true }));
    expect(ledger.admit(ban({ banId: 'enforced', startedAt: 2_000 }))).toBe(true);
    expect(ledger.admit(ban({ banId: 'longer', startedAt: 3_000, expiresAt: 120_000 }))).toBe(true);
    expect(ledger.admit(ban({ banId: 'after', startedAt: 120_000, expiresAt: 130_000 }))).toBe(true);
    expect(ledger.get('ip:192.0.2.1')?.banId).toBe('after');
  });

  it('follows the topic, keeps offender history past a tombstone, and hands out expired bans to their owner only', () => {
    const ledger = new BanLedger();
    ledger.observe('ip:192.0.2.1', ban({ escalationLevel: 2 }));
    ledger.observe('user:7', ban({ banId: 'm', subject: 'user:7', origin: 'manual', expiresAt: 5_000 }));
    ledger.observe('ip:192.0.2.9', ban({ banId: 'other', subject: 'ip:192.0.2.9', expiresAt: 5_000 }));
    expect(ledger.takeExpired(10_000, (b) => b.subject !== 'ip:192.0.2.9')).toEqual([]);
    expect(
      ledger
        .takeExpired(70_000, () => true)
        .map((b) => b.banId)
        .sort(),
    ).toEqual(['b1', 'other']);
    expect(ledger.get('user:7')?.banId).toBe('m');
    ledger.observe('ip:192.0.2.1', null);
    expect(ledger.historyOf('p', 'ip:192.0.2.1')).toEqual({ level: 2, lastBanEndsAt: 61_000 });
  });

  it("claims a ban's history once: not for a ban it admitted itself, once for one read from the topic, again for another ban", () => {
    const ledger = new BanLedger();
    ledger.admit(ban());
    ledger.observe('ip:192.0.2.1', ban()); // its own ban read back from the topic
    expect(ledger.claimHistory(ban())).toBe(false);
    const other = ban({ banId: 'b2', subject: 'ip:192.0.2.2' });
    ledger.observe('ip:192.0.2.2', other); // read from the topic after a restart
    expect(ledger.claimHistory(other)).toBe(true);
    expect(ledger.claimHistory(other)).toBe(false);
    const replaced = ban({ banId: 'b3', subject: 'ip:192.0.2.2', expiresAt: 90_000 });
    ledger.observe('ip:192.0.2.2', replaced);
    expect(ledger.claimHistory(replaced)).toBe(true);
    // Two bans admitted before the first is read back: reading it back forgets neither.
    const preview = ban({ banId: 'p1', subject: 'ip:192.0.2.3', preview: true });
    const enforced = ban({ banId: 'e1', subject: 'ip:192.0.2.3', startedAt: 1_001 });
    expect(ledger.admit(preview) && ledger.admit(enforced)).toBe(true);
    ledger.observe('ip:192.0.2.3', preview);
    ledger.observe('ip:192.0.2.3', enforced);
    expect([ledger.claimHistory(preview), ledger.claimHistory(enforced)]).toEqual([false, false]);
    // A tombstone, then the same ban again (a topic read from its start): claimed again.
    ledger.observe('ip:192.0.2.2', null);
    ledger.observe('ip:192.0.2.2', replaced);
    expect(ledger.claimHistory(replaced)).toBe(true);
    // Expired and handed out: forgotten with it.
    ledger.takeExpired(100_000, () => true);
    expect(ledger.claimHistory(replaced)).toBe(true);
  });
});
