/**
 * A hash table from int32 keys (IPv4 addresses as numbers) to values, for the one
 * lookup every request makes against up to millions of bans. Open addressing with
 * linear probing in one array of [key, value, memo] triples: a hit reads the key and
 * the value from one cache line, where a Map of that size chases two or three
 * pointers, and the memo (a text derived from the value, say) sits beside them
 * instead of in a side table that would cost another cache miss. Deletion shifts
 * later entries back (no tombstones), so lookups never slow down after churn.
 */
export class Int32Table<V, M = unknown> {
  /**
   * Triples [key, value, memo]; an undefined value marks an empty slot. Keys are
   * int32, small integers to V8, so the array stays one packed block.
   */
  private slots: (number | V | M | undefined)[];
  private mask: number;
  private count = 0;

  constructor(initialCapacity = 1024) {
    let capacity = 16;
    while (capacity < initialCapacity * 2) capacity *= 2;
    this.slots = emptySlots<V | M>(capacity);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.count;
  }

  get(key: number): V | undefined {
    const slot = this.slotOf(key);
    return slot < 0 ? undefined : (this.slots[3 * slot + 1] as V);
  }

  /** The slot holding `key`, or -1: for valueAt and the memo, with no second probe. */
  slotOf(key: number): number {
    const slots = this.slots;
    for (let i = home(key, this.mask); ; i = (i + 1) & this.mask) {
      if (slots[3 * i + 1] === undefined) return -1;
      if (slots[3 * i] === key) return i;
    }
  }

  valueAt(slot: number): V {
    return this.slots[3 * slot + 1] as V;
  }

  /** What setMemoAt left beside the entry; undefined after any set or delete of it. */
  memoAt(slot: number): M | undefined {
    return this.slots[3 * slot + 2] as M | undefined;
  }

  setMemoAt(slot: number, memo: M): void {
    this.slots[3 * slot + 2] = memo;
  }

  set(key: number, value: V): void {
    if (value === undefined) throw new TypeError('Int32Table values cannot be undefined (it marks an empty slot)');
    const slots = this.slots;
    let i = home(key, this.mask);
    for (; slots[3 * i + 1] !== undefined; i = (i + 1) & this.mask) {
      if (slots[3 * i] === key) {
        slots[3 * i + 1] = value;
        slots[3 * i + 2] = undefined;
        return;
      }
    }
    slots[3 * i] = key;
    slots[3 * i + 1] = value;
    slots[3 * i + 2] = undefined;
    this.count++;
    if (this.count * 2 > this.mask + 1) this.grow();
  }

  delete(key: number): boolean {
    const slots = this.slots;
    const mask = this.mask;
    let i = this.slotOf(key);
    if (i < 0) return false;
    this.count--;
    // Backward shift: move up each later entry of the run that may sit in the hole.
    for (let j = (i + 1) & mask; slots[3 * j + 1] !== undefined; j = (j + 1) & mask) {
      const h = home(slots[3 * j] as number, mask);
      // Entry j may move to the hole i unless its home lies cyclically in (i, j].
      if (i <= j ? h > i && h <= j : h > i || h <= j) continue;
      slots[3 * i] = slots[3 * j];
      slots[3 * i + 1] = slots[3 * j + 1];
      slots[3 * i + 2] = slots[3 * j + 2];
      i = j;
    }
    slots[3 * i] = 0;
    slots[3 * i + 1] = undefined;
    slots[3 * i + 2] = undefined;
    return true;
  }

  *entries(): IterableIterator<[number, V]> {
    const slots = this.slots;
    for (let i = 0; i <= this.mask; i++) {
      if (slots[3 * i + 1] !== undefined) yield [slots[3 * i] as number, slots[3 * i + 1] as V];
    }
  }

  /** Deletes every entry `drop` picks; returns how many (collects the keys first: deleting moves entries). */
  deleteWhere(drop: (value: V) => boolean): number {
    const doomed: number[] = [];
    for (const [k, v] of this.entries()) if (drop(v)) doomed.push(k);
    for (const k of doomed) this.delete(k);
    return doomed.length;
  }

  private grow(): void {
    const old = this.slots;
    const capacity = (this.mask + 1) * 2;
    const slots = emptySlots<V | M>(capacity);
    const mask = capacity - 1;
    for (let i = 0; i < old.length; i += 3) {
      if (old[i + 1] === undefined) continue;
      let j = home(old[i] as number, mask);
      while (slots[3 * j + 1] !== undefined) j = (j + 1) & mask;
      slots[3 * j] = old[i];
      slots[3 * j + 1] = old[i + 1];
      slots[3 * j + 2] = old[i + 2];
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/**
 * Filled by push, not `new Array(n)`: V8 makes a large preallocated array sparse
 * (a dictionary), and a dictionary lookup would undo what the layout is for.
 */
function emptySlots<T>(capacity: number): (number | T | undefined)[] {
  const slots: (number | T | undefined)[] = [];
  for (let i = 0; i < capacity; i++) slots.push(0, undefined, undefined);
  return slots;
}

/** A 32-bit mix (every input bit moves every output bit): neighbouring addresses land far apart. */
function home(key: number, mask: number): number {
  let h = Math.imul(key ^ (key >>> 16), 0x45d9f3b);
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  return (h ^ (h >>> 16)) & mask;
}
