import { EPOCH_MASK, W_EPOCH, W_H1, W_H2, W_SPAN, type WindowLayout } from './config.js';
import { releaseWide } from './slot.js';
import { SlotTable } from './table.js';
import type { WidePool } from './wide.js';

/**
 * The store's slow paths: removing keys, sweeping idle ones, shrinking and rebasing.
 * Kept apart from store.ts so the hot path reads in one sitting.
 */

/** After eviction, shrink when under this load, to a load of about 0.65. */
const SHRINK_LOAD = 0.2;
const TARGET_LOAD = 0.65;

export function removeSlot(table: SlotTable, wide: WidePool, layout: WindowLayout, slot: number): void {
  releaseWide(table.words, slot * layout.strideWords, layout, wide);
  table.removeAt(slot);
}

/** Where the incremental sweep resumes; the store owns one. */
export interface SweepCursor {
  slot: number;
}

/**
 * Looks at up to `maxSlots` slots (at most one full pass) from the cursor and removes
 * keys whose newest bucket (relative epoch) is below `idleBelow`. Returns how many.
 */
export function sweepIdle(table: SlotTable, wide: WidePool, layout: WindowLayout, cursor: SweepCursor, idleBelow: number, maxSlots: number): number {
  const stride = layout.strideWords;
  const budget = Math.min(table.capacity, Math.max(0, Math.floor(maxSlots) || 0));
  let removed = 0;
  for (let examined = 0; examined < budget; ) {
    if (cursor.slot >= table.capacity) cursor.slot = 0;
    const ew = table.words[cursor.slot * stride + W_EPOCH]!;
    if (ew !== 0 && (ew & EPOCH_MASK) < idleBelow) {
      // The backward shift may move another key into this slot: look at it again.
      removeSlot(table, wide, layout, cursor.slot);
      removed++;
    } else {
      cursor.slot++;
      examined++;
    }
  }
  if (table.size < table.capacity * SHRINK_LOAD && table.capacity > layout.initialCapacity) {
    table.resize(Math.max(layout.initialCapacity, Math.ceil(table.size / TARGET_LOAD)));
    cursor.slot = 0;
  }
  return removed;
}

/**
 * A copy of `table` with every relative epoch lowered by `delta`; keys whose epoch would
 * fall below 1 are so old no window can see them and are dropped.
 */
export function rebased(table: SlotTable, wide: WidePool, layout: WindowLayout, delta: number): SlotTable {
  const stride = layout.strideWords;
  const next = new SlotTable(stride, table.capacity);
  const words = table.words;
  for (let i = 0; i < table.capacity; i++) {
    const base = i * stride;
    const ew = words[base + W_EPOCH]!;
    if (ew === 0) continue;
    const ep = (ew & EPOCH_MASK) - delta;
    if (ep < 1) {
      releaseWide(words, base, layout, wide);
      continue;
    }
    const slot = -next.findOrInsert(words[base + W_H1]!, words[base + W_H2]!, ep | (ew & ~EPOCH_MASK)) - 1;
    next.words.set(words.subarray(base + W_SPAN, base + stride), slot * stride + W_SPAN);
  }
  return next;
}
