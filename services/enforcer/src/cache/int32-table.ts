/**
 * A hash table from int32 keys (IPv4 addresses as numbers) to values, for the one
 * lookup every request makes against up to millions of bans. Open addressing with
 * linear probing in one Int32Array of [key, value slot + 1] pairs: a probe reads one
 * cache line, where a Map of that size chases two or three pointers. Deletion shifts
 * later entries back (no tombstones), so lookups never slow down after churn.
 */
export class Int32Table<V> {
  /** Pairs [key, index into `values` + 1]; 0 in the second place marks an empty slot. */
  private slots: Int32Array;
  private mask: number;
  private readonly values: (V | undefined)[] = [];
  private readonly freeValues: number[] = [];
  private count = 0;

  constructor(initialCapacity = 1024) {
    let capacity = 16;
    while (capacity < initialCapacity * 2) capacity *= 2;
    this.slots = new Int32Array(capacity * 2);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.count;
  }

  get(key: number): V | undefined {
    const slots = this.slots;
    for (let i = home(key, this.mask); ; i = (i + 1) & this.mask) {
      const ref = slots[2 * i + 1]!;
      if (ref === 0) return undefined;
      if (slots[2 * i] === key) return this.values[ref - 1];
    }
  }

  set(key: number, value: V): void {
    const slots = this.slots;
    let i = home(key, this.mask);
    for (; ; i = (i + 1) & this.mask) {
      const ref = slots[2 * i + 1]!;
      if (ref === 0) break;
      if (slots[2 * i] === key) {
        this.values[ref - 1] = value;
        return;
      }
    }
    const index = this.freeValues.pop() ?? this.values.length;
    this.values[index] = value;
    slots[2 * i] = key;
    slots[2 * i + 1] = index + 1;
    this.count++;
    if (this.count * 2 > this.mask + 1) this.grow();
  }

  delete(key: number): boolean {
    const slots = this.slots;
    const mask = this.mask;
    let i = home(key, mask);
    for (; ; i = (i + 1) & mask) {
      const ref = slots[2 * i + 1]!;
      if (ref === 0) return false;
      if (slots[2 * i] === key) break;
    }
    const index = slots[2 * i + 1]! - 1;
    this.values[index] = undefined;
    this.freeValues.push(index);
    this.count--;
    // Backward shift: move up each later entry of the run that may sit in the hole.
    for (let j = (i + 1) & mask; slots[2 * j + 1] !== 0; j = (j + 1) & mask) {
      const h = home(slots[2 * j]!, mask);
      // Entry j may move to the hole i unless its home lies cyclically in (i, j].
      if (i <= j ? h > i && h <= j : h > i || h <= j) continue;
      slots[2 * i] = slots[2 * j]!;
      slots[2 * i + 1] = slots[2 * j + 1]!;
      i = j;
    }
    slots[2 * i] = 0;
    slots[2 * i + 1] = 0;
    return true;
  }

  *entries(): IterableIterator<[number, V]> {
    const slots = this.slots;
    for (let i = 0; i <= this.mask; i++) {
      const ref = slots[2 * i + 1]!;
      if (ref !== 0) yield [slots[2 * i]!, this.values[ref - 1]!];
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
    this.slots = new Int32Array(capacity * 2);
    this.mask = capacity - 1;
    for (let i = 0; i < old.length; i += 2) {
      if (old[i + 1] === 0) continue;
      let j = home(old[i]!, this.mask);
      while (this.slots[2 * j + 1] !== 0) j = (j + 1) & this.mask;
      this.slots[2 * j] = old[i]!;
      this.slots[2 * j + 1] = old[i + 1]!;
    }
  }
}

/** A 32-bit mix (every input bit moves every output bit): neighbouring addresses land far apart. */
function home(key: number, mask: number): number {
  let h = Math.imul(key ^ (key >>> 16), 0x45d9f3b);
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  return (h ^ (h >>> 16)) & mask;
}
