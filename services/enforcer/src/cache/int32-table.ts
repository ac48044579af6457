/**
 * A hash table from int32 keys (IPv4 addresses as numbers) to values, for the one
 * lookup every request makes against up to millions of bans. Open addressing with
 * linear probing in one array of entries [key, value, field 0, field 1, …]: a hit
 * reads the key, the value and the fields from one or two neighbouring cache lines,
 * where a Map of that size chases two or three pointers. The fields hold what the
 * caller derives from the value (a text, the facts a check needs) so that a check
 * need not read the value itself, which would cost another cache miss. Deletion
 * shifts later entries back (no tombstones), so lookups never slow down after churn.
 */
export class Int32Table<V> {
  /**
   * Entries of `width` elements; an undefined value marks an empty slot. Keys are
   * int32, small integers to V8, so the array stays one packed block.
   */
  private slots: unknown[];
  private mask: number;
  private count = 0;
  private readonly width: number;
  /** Scans open across changes (openScan); undefined when none, so a delete tests one field. */
  private scans: Int32Scan<V>[] | undefined;

  /** `fields`: how many fields each entry keeps beside its value (fieldAt). */
  constructor(
    initialCapacity = 1024,
    readonly fields = 1,
  ) {
    let capacity = 16;
    while (capacity < initialCapacity * 2) capacity *= 2;
    this.width = 2 + fields;
    this.slots = emptySlots(capacity, this.width);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.count;
  }

  get(key: number): V | undefined {
    const slot = this.slotOf(key);
    return slot < 0 ? undefined : (this.slots[this.width * slot + 1] as V);
  }

  /** The slot holding `key`, or -1: for valueAt and fieldAt, with no second probe. */
  slotOf(key: number): number {
    const slots = this.slots;
    const w = this.width;
    for (let i = home(key, this.mask); ; i = (i + 1) & this.mask) {
      if (slots[w * i + 1] === undefined) return -1;
      if (slots[w * i] === key) return i;
    }
  }

  /**
   * Reads the key in `key`'s home entry, with no branch on it: a load the CPU starts
   * while other work goes on, so that a slotOf soon after finds the entry in cache.
   */
  touch(key: number): number {
    return this.slots[this.width * home(key, this.mask)] as number;
  }

  valueAt(slot: number): V {
    return this.slots[this.width * slot + 1] as V;
  }

  /** Field `n` of the entry in `slot`: what setFieldAt left there; undefined after any set of the entry. */
  fieldAt(slot: number, n: number): unknown {
    return this.slots[this.width * slot + 2 + n];
  }

  setFieldAt(slot: number, n: number, value: unknown): void {
    if (!(n >= 0 && n < this.fields)) throw new RangeError(`field ${n} of an Int32Table with ${this.fields} fields per entry`);
    this.slots[this.width * slot + 2 + n] = value;
  }

  /** Sets the value of `key`, clearing its fields; returns its slot (valid until the next set or delete). */
  set(key: number, value: V): number {
    if (value === undefined) throw new TypeError('Int32Table values cannot be undefined (it marks an empty slot)');
    // Grown first, so the slot returned stays where it is.
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    const slots = this.slots;
    const w = this.width;
    let i = home(key, this.mask);
    for (; slots[w * i + 1] !== undefined; i = (i + 1) & this.mask) if (slots[w * i] === key) break;
    if (slots[w * i + 1] === undefined) this.count++;
    slots[w * i] = key;
    slots[w * i + 1] = value;
    for (let f = 2; f < w; f++) slots[w * i + f] = undefined;
    return i;
  }

  delete(key: number): boolean {
    const slots = this.slots;
    const mask = this.mask;
    const w = this.width;
    let i = this.slotOf(key);
    if (i < 0) return false;
    this.count--;
    // Backward shift: move up each later entry of the run that may sit in the hole.
    for (let j = (i + 1) & mask; slots[w * j + 1] !== undefined; j = (j + 1) & mask) {
      const h = home(slots[w * j] as number, mask);
      // Entry j may move to the hole i unless its home lies cyclically in (i, j].
      if (i <= j ? h > i && h <= j : h > i || h <= j) continue;
      if (this.scans) this.movedBack(j, i);
      for (let f = 0; f < w; f++) slots[w * i + f] = slots[w * j + f];
      i = j;
    }
    slots[w * i] = 0;
    for (let f = 1; f < w; f++) slots[w * i + f] = undefined;
    return true;
  }

  *entries(): IterableIterator<[number, V]> {
    const slots = this.slots;
    const w = this.width;
    for (let i = 0; i <= this.mask; i++) {
      if (slots[w * i + 1] !== undefined) yield [slots[w * i] as number, slots[w * i + 1] as V];
    }
  }

  /** Deletes every entry `drop` picks; returns how many (collects the keys first: deleting moves entries). */
  deleteWhere(drop: (value: V) => boolean): number {
    const doomed: number[] = [];
    for (const [k, v] of this.entries()) if (drop(v)) doomed.push(k);
    for (const k of doomed) this.delete(k);
    return doomed.length;
  }

  /**
   * Starts a scan that may pause between steps (scanStep) while entries are set and
   * deleted: it visits every entry present from its opening to its last step at least
   * once (an entry may be visited twice, after a growth or a delete's shift across the
   * start of the array). Close it with closeScan, or deletes keep feeding it.
   */
  openScan(): Int32Scan<V> {
    const scan: Int32Scan<V> = { next: 0, moved: [] };
    (this.scans ??= []).push(scan);
    return scan;
  }

  /** Visits up to `slots` slots of the scan, and the entries a delete moved behind it; true once the scan is complete. */
  scanStep(scan: Int32Scan<V>, slots: number, visit: (value: V) => void): boolean {
    const moved = scan.moved;
    while (moved.length > 0) visit(moved.pop()!);
    const all = this.slots;
    const w = this.width;
    const end = Math.min(this.mask + 1, scan.next + slots);
    for (let i = scan.next; i < end; i++) {
      const value = all[w * i + 1];
      if (value !== undefined) visit(value as V);
    }
    scan.next = end;
    return end > this.mask;
  }

  closeScan(scan: Int32Scan<V>): void {
    const open = this.scans?.filter((s) => s !== scan);
    this.scans = open && open.length > 0 ? open : undefined;
  }

  /** A delete moves the entry in slot `from` back to `to`: a scan already past `to` but not `from` would miss it. */
  private movedBack(from: number, to: number): void {
    for (const scan of this.scans!) if (from >= scan.next && to < scan.next) scan.moved.push(this.slots[this.width * from + 1] as V);
  }

  private grow(): void {
    const old = this.slots;
    const w = this.width;
    const capacity = (this.mask + 1) * 2;
    const slots = emptySlots(capacity, w);
    const mask = capacity - 1;
    for (let i = 0; i < old.length; i += w) {
      if (old[i + 1] === undefined) continue;
      let j = home(old[i] as number, mask);
      while (slots[w * j + 1] !== undefined) j = (j + 1) & mask;
      for (let f = 0; f < w; f++) slots[w * j + f] = old[i + f];
    }
    this.slots = slots;
    this.mask = mask;
    // Every entry moved: open scans start over (what they visited is visited again).
    if (this.scans) for (const scan of this.scans) scan.next = 0;
  }
}

/** Where a scan of an Int32Table stands (openScan): the next slot, and entries moved behind it. */
export interface Int32Scan<V> {
  next: number;
  readonly moved: V[];
}

/**
 * Filled by push, not `new Array(n)`: V8 makes a large preallocated array sparse
 * (a dictionary), and a dictionary lookup would undo what the layout is for.
 */
function emptySlots(capacity: number, width: number): unknown[] {
  const slots: unknown[] = [];
  for (let i = 0; i < capacity; i++) {
    slots.push(0);
    for (let f = 1; f < width; f++) slots.push(undefined);
  }
  return slots;
}

/** A 32-bit mix (every input bit moves every output bit): neighbouring addresses land far apart. */
function home(key: number, mask: number): number {
  let h = Math.imul(key ^ (key >>> 16), 0x45d9f3b);
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  return (h ^ (h >>> 16)) & mask;
}
