import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '../errors.js';
import { WindowStore } from './index.js';

const T0 = 1_700_000_040_000;
const config = { windowMs: 60_000, buckets: 4, graceMs: 5_000, seed: 99 };

function populated(): WindowStore {
  const s = new WindowStore(config);
  for (let i = 0; i < 200; i++) s.add(`k${i}`, T0 + i * 100, (i % 4) + 1, T0 + i * 100);
  s.add('hot', T0 + 20_000, 5_000, T0 + 20_000); // a wide key
  return s;
}

/** FNV-1a 32 over everything but the checksum field, as the format defines it. */
function resign(bytes: Uint8Array): Uint8Array {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    if (i >= 60 && i < 64) continue;
    h = Math.imul(h ^ bytes[i]!, 0x01000193);
  }
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(60, h >>> 0, true);
  return bytes;
}

function rejection(bytes: Uint8Array): unknown {
  try {
    WindowStore.restore(bytes);
  } catch (err) {
    return err;
  }
  return undefined;
}

const corruptErr = (bytes: Uint8Array) => isBanstreamError(rejection(bytes), 'WINDOW_SNAPSHOT_CORRUPT');

describe('snapshot', () => {
  it('round-trips counts, spans, wide keys and config', () => {
    const s = populated();
    const copy = WindowStore.restore(s.snapshot());
    expect(copy.layout).toEqual(s.layout);
    expect(copy.wideKeys).toBe(1);
    for (const at of [T0 + 20_000, T0 + 70_000, T0 + 79_999]) {
      for (const key of ['hot', 'k0', 'k150', 'k199']) expect(copy.estimate(key, at)).toBe(s.estimate(key, at));
    }
    expect(copy.snapshot()).toEqual(s.snapshot());
  });

  it('restores a store that never counted, and reads from any byte offset', () => {
    const empty = new WindowStore(config);
    expect(WindowStore.restore(empty.snapshot()).size).toBe(0);
    const bytes = populated().snapshot();
    const shifted = new Uint8Array(bytes.length + 3);
    shifted.set(bytes, 3);
    expect(WindowStore.restore(shifted.subarray(3)).estimate('hot', T0 + 20_000)).toBe(5_000);
  });

  it('rejects any flipped byte, truncation or trailing garbage as WINDOW_SNAPSHOT_CORRUPT', () => {
    const bytes = populated().snapshot();
    fc.assert(
      fc.property(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, xor) => {
        const copy = bytes.slice();
        copy[at]! ^= xor;
        expect(corruptErr(copy)).toBe(true);
      }),
    );
    expect(corruptErr(bytes.subarray(0, bytes.length - 1))).toBe(true);
    expect(corruptErr(bytes.subarray(0, 10))).toBe(true);
    const longer = new Uint8Array(bytes.length + 8);
    longer.set(bytes);
    expect(corruptErr(longer)).toBe(true);
  });

  it('checks the contents even when the checksum matches', () => {
    const bytes = populated().snapshot();
    const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
    const stride = 40;
    const h = 72; // the version 3 header
    const edits: [string, (b: Uint8Array) => void][] = [
      ['version', (b) => view(b).setUint16(4, 1, true)],
      ['config', (b) => view(b).setUint16(8, 7, true)],
      ['stride', (b) => view(b).setUint16(6, 11, true)],
      ['epoch 0', (b) => view(b).setInt32(h + 8, 0, true)],
      ['span first > last', (b) => {
        for (let w = 3; w < 8; w++) view(b).setInt32(h + w * 4, 5 | (4 << 14), true);
      }],
      ['span past the bucket', (b) => {
        for (let w = 3; w < 8; w++) view(b).setInt32(h + w * 4, 0 | (15_000 << 14), true);
      }],
      ['duplicate fingerprint', (b) => b.copyWithin(h + stride, h, h + 8)],
      ['slot count', (b) => view(b).setUint32(48, 3, true)],
      ['origin', (b) => view(b).setFloat64(40, 0.5, true)],
    ];
    for (const [what, edit] of edits) {
      const copy = bytes.slice();
      edit(copy);
      expect([what, corruptErr(resign(copy))]).toEqual([what, true]);
    }
  });

  it('round-trips the exact offsets of exact keys', () => {
    const s = new WindowStore({ ...config, exactFrom: 10 });
    for (let i = 0; i < 400; i++) s.add(`k${i % 20}`, T0 + i * 97, 1, T0 + i * 97);
    s.add('hot', T0 + 20_000, 5_000, T0 + 20_000); // exact, its lane modeled whole (past the cap)
    const copy = WindowStore.restore(s.snapshot());
    expect(copy.layout).toEqual(s.layout);
    expect([copy.exactKeys, copy.wideKeys]).toEqual([s.exactKeys, s.wideKeys]);
    expect(s.exactKeys).toBe(21);
    for (let at = T0 + 38_800; at < T0 + 110_000; at += 333) {
      for (const key of ['hot', 'k0', 'k7', 'k19']) expect(copy.estimate(key, at)).toBe(s.estimate(key, at));
    }
    expect(copy.snapshot()).toEqual(s.snapshot());
  });

  it('restores a version 2 image as a store without exactFrom', () => {
    const v3 = populated().snapshot();
    const v2 = new Uint8Array(v3.length - 8 - 4); // no exactFrom, no (empty) exact section
    v2.set(v3.subarray(0, 64));
    v2.set(v3.subarray(72, v3.length - 4), 64);
    new DataView(v2.buffer).setUint16(4, 2, true);
    const copy = WindowStore.restore(resign(v2));
    expect(copy.layout.exactFrom).toBe(Infinity);
    expect(copy.estimate('hot', T0 + 20_000)).toBe(5_000);
    expect(copy.estimate('k150', T0 + 20_000)).toBe(populated().estimate('k150', T0 + 20_000));
  });

  it('checks the exact section against the counts', () => {
    const s = new WindowStore({ ...config, exactFrom: 3 });
    for (let i = 0; i < 5; i++) s.add('k', T0 + i, 1, T0 + i);
    const bytes = s.snapshot();
    const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
    const exactAt = 72 + 40 + 5 * 8; // one slot, one wide entry
    expect(view(bytes).getUint32(exactAt, true)).toBe(1);
    // Lanes follow H and the wide index; find the one holding the five events.
    let lane0 = exactAt + 8;
    while (view(bytes).getUint32(lane0 + 12, true) === 0) lane0 += 16;
    expect(view(bytes).getInt32(lane0, true) + view(bytes).getUint32(lane0 + 12, true)).toBe(5);
    expect(view(bytes).getInt32(lane0, true)).toBe(3);
    const edits: [string, (b: Uint8Array) => void][] = [
      ['before', (b) => view(b).setInt32(lane0, 4, true)],
      ['span', (b) => view(b).setInt32(lane0 + 4, 3, true)],
      ['shape', (b) => view(b).setInt32(lane0 + 8, 255, true)],
      ['offset past the bucket', (b) => view(b).setUint16(lane0 + 16, 15_000, true)],
      ['wide index', (b) => view(b).setUint32(exactAt + 4, 1, true)],
      ['no exactFrom', (b) => view(b).setFloat64(64, Infinity, true)],
      ['exact entries', (b) => view(b).setUint32(exactAt, 2, true)],
    ];
    for (const [what, edit] of edits) {
      const copy = bytes.slice();
      edit(copy);
      expect([what, corruptErr(resign(copy))]).toEqual([what, true]);
    }
  });

  it('never throws anything but WINDOW_SNAPSHOT_CORRUPT on arbitrary bytes', () => {
    const header = populated().snapshot().subarray(0, 72);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.boolean(), (tail, withHeader) => {
        const bytes = new Uint8Array((withHeader ? 72 : 0) + tail.length);
        if (withHeader) bytes.set(header);
        bytes.set(tail, withHeader ? 72 : 0);
        expect(corruptErr(withHeader ? resign(bytes) : bytes)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
