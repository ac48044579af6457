import { describe, expect, it } from 'vitest';
import type { Ban } from '@banstream/schemas';
import { BanLifter } from './ban-expiry.js';
import { BanLedger } from './ban-ledger.js';
import { Outbox } from './outbox.js';

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

function held(...bans: Ban[]): BanLedger {
  const ledger = new BanLedger();
  for (const b of bans) ledger.observe(b.subject, b);
  return ledger;
}

describe('BanLifter', () => {
  it("puts the ended bans' history records, at each ban's end, in one outbox and their tombstones in the next", () => {
    const ledger = held(ban('ip:192.0.2.1'), ban('ip:192.0.2.2'), ban('ip:192.0.2.3', { expiresAt: 900_000 }));
    const lifter = new BanLifter();
    const first = new Outbox();
    expect(lifter.lift(ledger, 70_000, () => true, first)).toBe(0);
    expect(first.bans).toEqual([]);
    expect(first.history.map((h) => [h.key, h.value?.action, h.value?.at])).toEqual([
      ['ip:192.0.2.1', 'expire', 61_000],
      ['ip:192.0.2.2', 'expire', 61_000],
    ]);
    const second = new Outbox();
    expect(lifter.lift(ledger, 80_000, () => true, second)).toBe(2);
    expect(second.bans).toEqual([
      { key: 'ip:192.0.2.1', value: null },
      { key: 'ip:192.0.2.2', value: null },
    ]);
    expect(second.history).toEqual([]);
    // Each ban is lifted once.
    const third = new Outbox();
    expect(lifter.lift(ledger, 90_000, () => true, third)).toBe(0);
    expect(third.size).toBe(0);
  });

  it('writes no tombstone over a ban placed on the subject in between', () => {
    const ledger = held(ban('ip:192.0.2.1'));
    const lifter = new BanLifter();
    lifter.lift(ledger, 70_000, () => true, new Outbox());
    ledger.admit(ban('ip:192.0.2.1', { banId: 'again', startedAt: 69_000, expiresAt: 700_000 }));
    const out = new Outbox();
    expect(lifter.lift(ledger, 80_000, () => true, out)).toBe(0);
    expect(out.bans).toEqual([]);
  });

  it("leaves the tombstone to the partition's new owner when it moved in between", () => {
    const ledger = held(ban('ip:192.0.2.1'));
    const lifter = new BanLifter();
    lifter.lift(ledger, 70_000, () => true, new Outbox());
    const out = new Outbox();
    expect(lifter.lift(ledger, 80_000, () => false, out)).toBe(0);
    expect(out.bans).toEqual([]);
  });

  it('lifts nothing of bans it does not own or that have not ended', () => {
    const lifter = new BanLifter();
    const out = new Outbox();
    lifter.lift(held(ban('ip:192.0.2.1')), 70_000, () => false, out);
    lifter.lift(held(ban('ip:192.0.2.1')), 10_000, () => true, out);
    expect(out.size).toBe(0);
  });
});
