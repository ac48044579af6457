/**
 * A hash index from int32 keys (IPv4 addresses as numbers) to small non-negative
 * integers (the caller's entry numbers), for the one lookup every request makes
 * against up to millions of bans. Open addressing with linear probing over one
 * Int32Array of slots [key, value + 1] (0: empty): eight bytes a slot, eight slots a
 * cache line, so a probe run rarely leaves one line, and no JavaScript object per key.
 * What a key leads to lives in the caller's own typed arrays (ban-store.ts), so growth
 * and deletion's shifts copy only the two int32s of a slot. Deletion shifts later
 * slots back (no tombstones), so lookups never slow down after churn.
 */
export class Int32Index {
  /** Slot i is slots[2i] (the key) and slots[2i + 1] (its value + 1; 0 marks an empty slot). */
  private slots: Int32Array;
  private mask: number;
  private count = 0;
  /** Scans open across changes (openScan); undefined when none, so a delete tests one field. */
  private scans: Int32Scan[] | undefined;

  constructor(initialCapacity = 1024) {
    let capacity = 16;
    while (capacity < initialCapacity * 2 && capacity < MAX_CAPACITY) capacity *= 2;
    this.slots = new Int32Array(2 * capacity);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.count;
  }

  /** The value of `key`, or -1. */
  get(key: number): number {
    const slots = this.slots;
    const mask = this.mask;
    for (let i = home(key, mask); ; i = (i + 1) & mask) {
      const value = slots[2 * i + 1]!;
      if (value === 0) return -1;
      if (slots[2 * i] === key) return value - 1;
    }
  }

  /**
   * Reads the key in `key`'s home slot, with no branch on it: a load the CPU starts
   * while other work goes on, so that a get soon after finds the slot in cache.
   */
  touch(key: number): number {
    return this.slots[2 * home(key, this.mask)]!;
  }

  /** Sets the value of `key`; returns the value it replaced, or -1. */
  set(key: number, value: number): number {
    if ((key | 0) !== key) throw new RangeError(`Int32Index keys are int32 integers, not ${key}`);
    if (!(Number.isInteger(value) && value >= 0 && value < MAX_VALUE)) throw new RangeError(`Int32Index values are integers from 0 to ${MAX_VALUE - 1}, not ${value}`);
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    const slots = this.slots;
    const mask = this.mask;
    let i = home(key, mask);
    for (; slots[2 * i + 1] !== 0; i = (i + 1) & mask) {
      if (slots[2 * i] !== key) continue;
      const before = slots[2 * i + 1]! - 1;
      slots[2 * i + 1] = value + 1;
      return before;
    }
    slots[2 * i] = key;
    slots[2 * i + 1] = value + 1;
    this.count++;
    return -1;
  }

  /** Deletes `key`; returns its value, or -1 if it was absent. */
  delete(key: number): number {
    const slots = this.slots;
    const mask = this.mask;
    let i = home(key, mask);
    for (; ; i = (i + 1) & mask) {
      if (slots[2 * i + 1] === 0) return -1;
      if (slots[2 * i] === key) break;
    }
    const value = slots[2 * i + 1]! - 1;
    this.count--;
    // Backward shift: move up each later slot of the run that may sit in the hole.
    for (let j = (i + 1) & mask; slots[2 * j + 1] !== 0; j = (j + 1) & mask) {
      const h = home(slots[2 * j]!, mask);
      // Slot j may move to the hole i unless its home lies cyclically in (i, j].
      if (i <= j ? h > i && h <= j : h > i || h <= j) continue;
      if (this.scans) this.movedBack(j, i);
      slots[2 * i] = slots[2 * j]!;
      slots[2 * i + 1] = slots[2 * j + 1]!;
      i = j;
    }
    slots[2 * i] = 0;
    slots[2 * i + 1] = 0;
    return value;
  }

  *entries(): IterableIterator<[number, number]> {
    for (let i = 0; i <= this.mask; i++) if (this.slots[2 * i + 1] !== 0) yield [this.slots[2 * i]!, this.slots[2 * i + 1]! - 1];
  }

  /**
   * Starts a scan that may pause between steps (scanStep) while keys are set and
   * deleted: it visits every key present from its opening to its last step at least
   * once (a key may be visited twice, after a growth or a delete's shift across the
   * start of the array). Close it with closeScan, or deletes keep feeding it.
   */
  openScan(): Int32Scan {
    const scan: Int32Scan = { next: 0, moved: [] };
    (this.scans ??= []).push(scan);
    return scan;
  }

  /** Visits up to `slots` slots of the scan, and the keys a delete moved behind it; true once the scan is complete. */
  scanStep(scan: Int32Scan, slots: number, visit: (key: number, value: number) => void): boolean {
    const moved = scan.moved;
    while (moved.length > 0) {
      const value = moved.pop()!;
      visit(moved.pop()!, value);
    }
    const end = Math.min(this.mask + 1, scan.next + slots);
    for (let i = scan.next; i < end; i++) if (this.slots[2 * i + 1] !== 0) visit(this.slots[2 * i]!, this.slots[2 * i + 1]! - 1);
    scan.next = end;
    return end > this.mask;
  }

  closeScan(scan: Int32Scan): void {
    const open = this.scans?.filter((s) => s !== scan);
    this.scans = open && open.length > 0 ? open : undefined;
  }

  /** A delete moves the key in slot `from` back to `to`: a scan already past `to` but not `from` would miss it. */
  private movedBack(from: number, to: number): void {
    for (const scan of this.scans!) if (from >= scan.next && to < scan.next) scan.moved.push(this.slots[2 * from]!, this.slots[2 * from + 1]! - 1);
  }

  private grow(): void {
    const capacity = (this.mask + 1) * 2;
    if (capacity > MAX_CAPACITY) throw new RangeError(`an Int32Index holds at most ${MAX_CAPACITY / 2} keys`);
    const old = this.slots;
    const slots = new Int32Array(2 * capacity);
    const mask = capacity - 1;
    for (let i = 0; i < old.length; i += 2) {
      if (old[i + 1] === 0) continue;
      let j = home(old[i]!, mask);
      while (slots[2 * j + 1] !== 0) j = (j + 1) & mask;
      slots[2 * j] = old[i]!;
      slots[2 * j + 1] = old[i + 1]!;
    }
    this.slots = slots;
    this.mask = mask;
    // Every slot moved: open scans start over (what they visited is visited again).
    if (this.scans) for (const scan of this.scans) scan.next = 0;
  }
}

/** Where a scan of an Int32Index stands (openScan): the next slot, and [key, value] pairs moved behind it. */
export interface Int32Scan {
  next: number;
  readonly moved: number[];
}

/** Values stored + 1 in an int32. */
const MAX_VALUE = 2 ** 31 - 1;
/** Slots at most (2^28, a 2 GiB Int32Array): 134,217,728 keys, far past what a cache is configured to hold. */
const MAX_CAPACITY = 2 ** 28;

/** A 32-bit mix (every input bit moves every output bit): neighbouring addresses land far apart. */
function home(key: number, mask: number): number {
  let h = Math.imul(key ^ (key >>> 16), 0x45d9f3b);
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  return (h ^ (h >>> 16)) & mask;
}
