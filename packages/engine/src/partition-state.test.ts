import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Allowlist, compilePolicy } from '@banstream/core';
import { BanLedger } from './ban-ledger.js';
import { observe } from './decider.js';
import { countedAt, receivedAt } from './event-time.js';
import { Outbox } from './outbox.js';
import { LATE, PartitionState } from './partition-state.js';

const NOW = 1_800_000_000_000;
const GRACE = 5_000;
const state = () => new PartitionState(0, { graceMs: GRACE, hotShare: 0.5, countIntervalMs: 250 });

describe('receivedAt', () => {
  it("is the record's Kafka timestamp, or the aggregator's clock when that is earlier or the timestamp unusable", () => {
    expect(receivedAt(String(NOW - 300), NOW)).toBe(NOW - 300);
    expect(receivedAt(String(NOW + 60_000), NOW)).toBe(NOW); // a broker (or producer) clock ahead of ours
    for (const bad of ['', '0', '-5', 'x', 'NaN', 'Infinity']) expect(receivedAt(bad, NOW), bad).toBe(NOW);
  });

  it('is the same for a record read live and read again in a replay hours later', () => {
    expect(receivedAt(String(NOW), NOW + 40)).toBe(receivedAt(String(NOW), NOW + 7_200_000));
  });
});

describe('countedAt', () => {
  it('is the event time, but never past the receiving time', () => {
    expect(countedAt(NOW - 2_000, NOW)).toBe(NOW - 2_000);
    expect(countedAt(NOW + 4_000, NOW)).toBe(NOW);
    expect(countedAt(NOW + 3_600_000, NOW)).toBe(NOW);
  });
});

describe('PartitionState.admit', () => {
  it('keeps an early event from making the honest events after it late', () => {
    const s = state();
    expect(s.admit(NOW + 4_000, NOW)).toBe(NOW); // 4 s ahead: counted at the receiving time
    expect(s.watermark).toBe(NOW);
    // 3 s old on arrival, within the grace period: the old watermark (NOW + 4 s) made it late.
    expect(s.admit(NOW - 3_000, NOW + 10)).toBe(NOW - 3_000);
    expect(s.watermark).toBe(NOW);
  });

  it('still refuses an event that was older than the grace period when it arrived', () => {
    const s = state();
    s.admit(NOW, NOW);
    expect(s.admit(NOW - GRACE - 1, NOW + 10)).toBe(LATE);
    expect(s.admit(NOW - GRACE, NOW + 10)).toBe(NOW - GRACE);
  });

  it('counts a flood whole after events dated a minute and an hour ahead (the attack of issue 25)', () => {
    const s = state();
    const policy = compilePolicy({ id: 'flood', mode: 'enforce', key: ['ip'], threshold: { count: 100, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } });
    const ctx = { ledger: new BanLedger(), allowlist: new Allowlist(), nowMs: () => NOW };
    const out = new Outbox();
    for (let i = 0; i < 400; i++) {
      const received = NOW + i * 5;
      // Were checkEvent lax, these would still move no clock past the receiving time.
      if (i % 50 === 0) for (const ahead of [55_000, 3_600_000]) s.admit(received + ahead, received);
      const t = s.admit(received - 200, received);
      expect(t).not.toBe(LATE);
      observe(ctx, s, policy, 'ip:192.0.2.66', t, 1, s.watermark, out);
    }
    expect(s.counter.estimate('flood|ip:192.0.2.66', 60_000, s.watermark, 100)).toBe(400);
    expect(out.bans.map((b) => b.value?.evidenceCount)).toEqual([101]);
  });

  /** Records of events: each record's Kafka timestamp, the events' times as offsets from it, and how long after it the record is read live. */
  const records = fc.array(
    fc.record({
      gap: fc.oneof(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: -10_000, max: 0 })), // a broker's clock may step back
      lag: fc.integer({ min: 0, max: 2_000 }),
      offsets: fc.array(fc.oneof(fc.integer({ min: -20_000, max: 6_000 }), fc.constantFrom(55_000, 3_600_000, -GRACE, -GRACE - 1)), { maxLength: 8 }),
    }),
    { maxLength: 40 },
  );

  it('never lets an event be late that is counted no older than the grace period behind the newest receiving time, nor the clock pass that time', () => {
    fc.assert(
      fc.property(records, (rs) => {
        const s = state();
        let written = NOW;
        let newest = -Infinity;
        for (const r of rs) {
          written += r.gap;
          const received = receivedAt(String(written), written + r.lag);
          newest = Math.max(newest, received);
          for (const offset of r.offsets) {
            // An honest event (dated at or before its receiving time) is counted at its own time.
            const at = countedAt(received + offset, received);
            const t = s.admit(received + offset, received);
            if (at >= newest - GRACE) expect(t).toBe(at);
            expect(s.watermark).toBeLessThanOrEqual(newest);
          }
        }
      }),
    );
  });

  it('decides in a replay, hours later, exactly as it did live', () => {
    fc.assert(
      fc.property(records, (rs) => {
        const run = (readAt: (written: number, lag: number) => number) => {
          const s = state();
          const decisions: number[] = [];
          let written = NOW;
          for (const r of rs) {
            written += r.gap;
            const received = receivedAt(String(written), readAt(written, r.lag));
            for (const offset of r.offsets) decisions.push(s.admit(written + offset, received));
          }
          return { decisions, watermark: s.watermark };
        };
        expect(run((_written, _lag) => NOW + 7_200_000)).toEqual(run((written, lag) => written + lag));
      }),
    );
  });
});
