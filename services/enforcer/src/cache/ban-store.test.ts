import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Ban } from '@banstream/schemas';
import { BanStore, TEXTS_HELD } from './ban-store.js';

const ban = (subject: string, evidenceCount = 1.5): Ban => ({
  banId: `id-${subject}`,
  subject,
  policyId: 'p',
  reason: 'r',
  evidenceCount,
  windowSeconds: 60,
  startedAt: 1_000,
  expiresAt: 61_000,
  preview: false,
  escalationLevel: 0,
  origin: 'aggregator',
  httpStatus: 403,
  createdBy: null,
});

describe('BanStore denial texts', () => {
  it("keeps each entry's text until its ban is replaced or dropped, never another entry's, and makes its ban again whole", () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('put' as const), slot: fc.nat(30), evidence: fc.double({ noNaN: true }) }),
      fc.record({ kind: fc.constant('drop' as const), slot: fc.nat(30) }),
      fc.record({ kind: fc.constant('text' as const), slot: fc.nat(30), text: fc.string() }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const store = new BanStore();
        // The model: slot -> the entry holding it, that entry's evidence and text.
        const held = new Map<number, { entry: number; evidence: number; text?: string }>();
        for (const o of ops) {
          const h = held.get(o.slot);
          if (o.kind === 'put') held.set(o.slot, { entry: store.put(h?.entry ?? -1, `s${o.slot}`, ban(`s${o.slot}`, o.evidence)), evidence: o.evidence });
          else if (o.kind === 'drop' && h) {
            store.drop(h.entry);
            held.delete(o.slot);
          } else if (o.kind === 'text' && h) {
            store.setText(h.entry, o.text);
            h.text = o.text;
          }
          for (const [slot, x] of held) {
            expect(store.text(x.entry)).toBe(x.text);
            expect(store.ban(x.entry, `s${slot}`).evidenceCount).toBe(x.evidence);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('holds at most TEXTS_HELD texts: past that all are dropped and built again, and a text is never read from a stale pair', () => {
    const store = new BanStore();
    const entries: number[] = [];
    for (let i = 0; i <= TEXTS_HELD; i++) entries.push(store.put(-1, `s${i}`, ban(`s${i}`)));
    for (let i = 0; i < TEXTS_HELD; i++) store.setText(entries[i]!, `t${i}`);
    expect(store.text(entries[0]!)).toBe('t0');
    expect(store.text(entries[TEXTS_HELD - 1]!)).toBe(`t${TEXTS_HELD - 1}`);
    // One more: every text is dropped, the new one kept.
    store.setText(entries[TEXTS_HELD]!, 'last');
    expect(store.text(entries[0]!)).toBeUndefined();
    expect(store.text(entries[TEXTS_HELD - 1]!)).toBeUndefined();
    expect(store.text(entries[TEXTS_HELD]!)).toBe('last');
    // The old first entry's row still names pair 0, now another entry's: it reads none, and gets a pair of its own.
    expect(store.text(entries[1]!)).toBeUndefined();
    store.setText(entries[1]!, 'again');
    expect(store.text(entries[1]!)).toBe('again');
    expect(store.text(entries[TEXTS_HELD]!)).toBe('last');
    // A dropped entry's pair is reused, and the entry reused for another ban has no text.
    store.drop(entries[1]!);
    const reused = store.put(-1, 'other', ban('other'));
    expect(reused).toBe(entries[1]);
    expect(store.text(reused)).toBeUndefined();
  });
});
