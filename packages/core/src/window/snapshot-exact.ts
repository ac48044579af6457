import { SHAPE_SHIFT, SPAN_BITS, SPAN_MASK, type WindowLayout } from './config.js';
import { MODELED_WHOLE } from './exact-pool.js';
import type { WidePool } from './wide.js';

/**
 * The exact section of a version 3 snapshot (snapshot.ts), after the wide counts: the
 * exact offsets of the exact keys, found through their wide entries. Little-endian:
 *
 * | size | field |
 * |---|---|
 * | 4 | exact entries H |
 * | per entry: 4 | its wide entry's index among the snapshot's E, ascending |
 * | per lane (R): 4, 4, 4, 4 | events before recording (-1: modeled whole), their span word, their shape, recorded offsets M |
 * | per lane: M × 2 | the offsets, in exactUnitMs, ascending |
 */

/** `wideOrder[e]` = the pool entry written as the snapshot's wide entry e. */
export function exactSectionBytes(wide: WidePool, wideOrder: ArrayLike<number>): number {
  let bytes = 4;
  for (let e = 0; e < wideOrder.length; e++) {
    const h = wide.exactOf[wideOrder[e]!]! - 1;
    if (h < 0) continue;
    bytes += 4 + wide.ring * 16;
    for (let k = 0; k < wide.ring; k++) bytes += 2 * wide.exact.recorded(h, k);
  }
  return bytes;
}

/** Writes the section at `at`; returns where it ends. */
export function encodeExactSection(view: DataView, at: number, wide: WidePool, wideOrder: ArrayLike<number>): number {
  const pool = wide.exact;
  const countAt = at;
  let count = 0;
  at += 4;
  const scratch = new Uint16Array(pool.laneCap);
  for (let e = 0; e < wideOrder.length; e++) {
    const h = wide.exactOf[wideOrder[e]!]! - 1;
    if (h < 0) continue;
    count++;
    view.setUint32(at, e, true);
    at += 4;
    for (let k = 0; k < wide.ring; k++) {
      const m = pool.copyOffsets(h, k, scratch, 0);
      view.setInt32(at, pool.before(h, k), true);
      view.setInt32(at + 4, pool.spanWord(h, k), true);
      view.setInt32(at + 8, pool.shape(h, k), true);
      view.setUint32(at + 12, m, true);
      at += 16;
      for (let i = 0; i < m; i++, at += 2) view.setUint16(at, scratch[i]!, true);
    }
  }
  view.setUint32(countAt, count, true);
  return at;
}

/**
 * Reads the section at `at` into `wide`, whose entry for the snapshot's wide entry e is
 * `entries[e]` and already holds its counts. Returns where the section ends; throws
 * `corrupt(reason)` on anything a store could not have written.
 */
export function decodeExactSection(view: DataView, at: number, layout: WindowLayout, wide: WidePool, entries: Int32Array, corrupt: (reason: string) => Error): number {
  const r = layout.ring;
  const need = (bytes: number) => {
    if (at + bytes > view.byteLength) throw corrupt('exact section runs past the end');
  };
  need(4);
  const count = view.getUint32(at, true);
  at += 4;
  if (count > 0 && layout.exactFrom === Infinity) throw corrupt('exact keys in a store without exactFrom');
  let previous = -1;
  for (let n = 0; n < count; n++) {
    need(4);
    const e = view.getUint32(at, true);
    at += 4;
    if (e >= entries.length || e <= previous) throw corrupt(`exact entry ${n} points at wide entry ${e}`);
    previous = e;
    const entry = entries[e]!;
    const h = wide.heat(entry);
    for (let k = 0; k < r; k++) {
      need(16);
      const before = view.getInt32(at, true);
      const span = view.getInt32(at + 4, true);
      const shape = view.getInt32(at + 8, true);
      const m = view.getUint32(at + 12, true);
      at += 16;
      const lane = `exact entry ${n} lane ${k}`;
      if (!laneIsSane(layout, wide.counts[entry * r + k]!, before, span, shape, m)) throw corrupt(`${lane} is inconsistent`);
      need(2 * m);
      wide.exact.freeze(h, k, before, span, shape);
      for (let i = 0; i < m; i++, at += 2) {
        const offset = view.getUint16(at, true);
        if (offset * layout.exactUnitMs >= layout.granularityMs) throw corrupt(`${lane} has offset ${offset}`);
        wide.exact.record(h, k, offset, 1);
      }
    }
  }
  return at;
}

/** Whether a lane's fields are what ExactPool could hold for a lane counting `total` events. */
function laneIsSane(layout: WindowLayout, total: number, before: number, span: number, shape: number, m: number): boolean {
  const cap = layout.exactLaneCap;
  if (before === MODELED_WHOLE) return m === 0 && span === 0 && shape === 0;
  if (before < 0 || before > cap || m > cap || before + m !== total) return false;
  if (before === 0) return span === 0 && shape === 0;
  const f = span & SPAN_MASK;
  const l = (span >>> SPAN_BITS) & SPAN_MASK;
  return span >>> SHAPE_SHIFT === 0 && f <= l && l * layout.unitMs < layout.granularityMs && shape >= 0 && shape <= layout.shapeMax;
}
