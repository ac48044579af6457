import { describe, expect, it } from 'vitest';
import type { Ban } from '@banstream/schemas';
import { liftExpiredBans } from './ban-expiry.js';
import { BanLedger } from './ban-ledger.js';
import { Outbox, type Drained } from './outbox.js';

const ban = (subject: string, over: Partial<Ban> = {}): Ban => ({
  banId: `id-${subject}`,
  subject,
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

describe('liftExpiredBans', () => {
  it("flushes the expiries' history records, at each ban's end, before any tombstone", async () => {
    const ledger = new BanLedger();
    for (const s of ['ip:192.0.2.1', 'ip:192.0.2.2']) ledger.observe(s, ban(s));
    ledger.observe('ip:192.0.2.3', ban('ip:192.0.2.3', { expiresAt: 900_000 }));
    const out = new Outbox();
    const flushed: Drained[] = [];
    const lifted = await liftExpiredBans(
      ledger,
      70_000,
      () => true,
      out,
      async () => void flushed.push(out.drain()),
    );
    expect(flushed).toHaveLength(1);
    expect(flushed[0]!.bans).toEqual([]);
    expect(flushed[0]!.history.map((h) => [h.key, h.value?.action, h.value?.at])).toEqual([
      ['ip:192.0.2.1', 'expire', 61_000],
      ['ip:192.0.2.2', 'expire', 61_000],
    ]);
    expect(lifted).toBe(2);
    expect(out.bans).toEqual([
      { key: 'ip:192.0.2.1', value: null },
      { key: 'ip:192.0.2.2', value: null },
    ]);
    expect(out.history).toEqual([]);
  });

  it('writes no tombstone over a ban placed on the subject while the history was flushed', async () => {
    const ledger = new BanLedger();
    ledger.observe('ip:192.0.2.1', ban('ip:192.0.2.1'));
    const out = new Outbox();
    const lifted = await liftExpiredBans(
      ledger,
      70_000,
      () => true,
      out,
      async () => {
        ledger.admit(ban('ip:192.0.2.1', { banId: 'again', startedAt: 69_000, expiresAt: 700_000 }));
        out.drain();
      },
    );
    expect(lifted).toBe(0);
    expect(out.bans).toEqual([]);
  });

  it("leaves the tombstone to the partition's new owner when it moved while the history was flushed", async () => {
    const ledger = new BanLedger();
    ledger.observe('ip:192.0.2.1', ban('ip:192.0.2.1'));
    let owned = true;
    const out = new Outbox();
    const lifted = await liftExpiredBans(
      ledger,
      70_000,
      () => owned,
      out,
      async () => {
        owned = false;
        out.drain();
      },
    );
    expect(lifted).toBe(0);
    expect(out.bans).toEqual([]);
  });

  it('does nothing, not even a flush, when no owned ban has ended', async () => {
    const ledger = new BanLedger();
    ledger.observe('ip:192.0.2.1', ban('ip:192.0.2.1'));
    let flushes = 0;
    expect(
      await liftExpiredBans(
        ledger,
        70_000,
        () => false,
        new Outbox(),
        async () => void flushes++,
      ),
    ).toBe(0);
    expect(
      await liftExpiredBans(
        ledger,
        10_000,
        () => true,
        new Outbox(),
        async () => void flushes++,
      ),
    ).toBe(0);
    expect(flushes).toBe(0);
  });

  it('leaves the tombstones unwritten when the flush fails: the ban stays on the topic for the next instance to lift', async () => {
    const ledger = new BanLedger();
    ledger.observe('ip:192.0.2.1', ban('ip:192.0.2.1'));
    const out = new Outbox();
    await expect(
      liftExpiredBans(
        ledger,
        70_000,
        () => true,
        out,
        async () => Promise.reject(new Error('Kafka away, service stopping')),
      ),
    ).rejects.toThrow('Kafka away');
    expect(out.bans).toEqual([]);
  });
});
