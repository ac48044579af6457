/**
 * A hash table from int32 keys (IPv4 addresses as numbers) to values, for the one
 * lookup every request makes against up to millions of bans. Open addressing with
 * linear probing over an Int32Array of slots [key, entry number + 1] (0: empty), eight
 * bytes a slot and eight slots a cache line, so a probe run rarely leaves one line.
 * The entry a slot names holds the value and its fields side by side, in chunks of a
 * JavaScript array that never move: growth and deletion's shifts copy only the two
 * int32s of a slot, and no array comes near V8's limit of 134,217,725 elements, past
 * which an allocation aborts the process (the former single array of entries hit it at
 * 8,388,608 keys). The fields hold what the caller derives from the value (a text, the
 * facts a check needs) so that a check need not read the value itself, which would
 * cost another cache miss. Deletion shifts later slots back (no tombstones), so
 * lookups never slow down after churn; a deleted entry's number is reused.
 */
export class Int32Table<V> {
  /** Slot i is slots[2i] (the key) and slots[2i + 1] (its entry number + 1; 0 marks an empty slot). */
  private slots: Int32Array;
  private mask: number;
  private count = 0;
  /** Entries of `width` elements [value, field 0, field 1, …], ENTRY_CHUNK entries per chunk. */
  private readonly chunks: unknown[][] = [];
  /** Entry numbers handed out so far; those below it and not in `free` are in use. */
  private entriesMade = 0;
  /** Entry numbers deletes gave back, reused first. */
  private readonly free: number[] = [];
  private readonly width: number;
  /** Scans open across changes (openScan); undefined when none, so a delete tests one field. */
  private scans: Int32Scan<V>[] | undefined;

  /** `fields`: how many fields each entry keeps beside its value (fieldAt). */
  constructor(
    initialCapacity = 1024,
    readonly fields = 1,
  ) {
    if (!(Number.isInteger(fields) && fields >= 0 && fields <= MAX_FIELDS)) throw new RangeError(`an Int32Table entry keeps 0 to ${MAX_FIELDS} fields, not ${fields}`);
    let capacity = 16;
    while (capacity < initialCapacity * 2 && capacity < MAX_CAPACITY) capacity *= 2;
    this.width = 1 + fields;
    this.slots = new Int32Array(2 * capacity);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.count;
  }

  get(key: number): V | undefined {
    const slot = this.slotOf(key);
    return slot < 0 ? undefined : this.valueAt(slot);
  }

  /** The slot holding `key`, or -1: for valueAt and fieldAt, with no second probe. */
  slotOf(key: number): number {
    const slots = this.slots;
    const mask = this.mask;
    for (let i = home(key, mask); ; i = (i + 1) & mask) {
      if (slots[2 * i + 1] === 0) return -1;
      if (slots[2 * i] === key) return i;
    }
  }

  /**
   * Reads the key in `key`'s home slot, with no branch on it: a load the CPU starts
   * while other work goes on, so that a slotOf soon after finds the slot in cache.
   */
  touch(key: number): number {
    return this.slots[2 * home(key, this.mask)]!;
  }

  valueAt(slot: number): V {
    const entry = this.slots[2 * slot + 1]! - 1;
    return this.chunks[entry >>> CHUNK_BITS]![(entry & CHUNK_MASK) * this.width] as V;
  }

  /** Field `n` of the entry in `slot`: what setFieldAt left there; undefined after any set of the entry. */
  fieldAt(slot: number, n: number): unknown {
    const entry = this.slots[2 * slot + 1]! - 1;
    return this.chunks[entry >>> CHUNK_BITS]![(entry & CHUNK_MASK) * this.width + 1 + n];
  }

  setFieldAt(slot: number, n: number, value: unknown): void {
    if (!(n >= 0 && n < this.fields)) throw new RangeError(`field ${n} of an Int32Table with ${this.fields} fields per entry`);
    const entry = this.slots[2 * slot + 1]! - 1;
    this.chunks[entry >>> CHUNK_BITS]![(entry & CHUNK_MASK) * this.width + 1 + n] = value;
  }

  /** Sets the value of `key`, clearing its fields; returns its slot (valid until the next set or delete). */
  set(key: number, value: V): number {
    if (value === undefined) throw new TypeError('Int32Table values cannot be undefined (it marks an empty entry)');
    if ((key | 0) !== key) throw new RangeError(`Int32Table keys are int32 integers, not ${key}`);
    // Grown first, so the slot returned stays where it is.
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    const slots = this.slots;
    const mask = this.mask;
    let i = home(key, mask);
    for (; slots[2 * i + 1] !== 0; i = (i + 1) & mask) if (slots[2 * i] === key) break;
    let entry = slots[2 * i + 1]! - 1;
    if (entry < 0) {
      entry = this.newEntry();
      slots[2 * i] = key;
      slots[2 * i + 1] = entry + 1;
      this.count++;
    }
    const chunk = this.chunks[entry >>> CHUNK_BITS]!;
    const at = (entry & CHUNK_MASK) * this.width;
    chunk[at] = value;
    for (let f = 1; f < this.width; f++) chunk[at + f] = undefined;
    return i;
  }

  delete(key: number): boolean {
    const slots = this.slots;
    const mask = this.mask;
    let i = this.slotOf(key);
    if (i < 0) return false;
    this.freeEntry(slots[2 * i + 1]! - 1);
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
    return true;
  }

  *entries(): IterableIterator<[number, V]> {
    for (let i = 0; i <= this.mask; i++) if (this.slots[2 * i + 1] !== 0) yield [this.slots[2 * i]!, this.valueAt(i)];
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
    const end = Math.min(this.mask + 1, scan.next + slots);
    for (let i = scan.next; i < end; i++) if (this.slots[2 * i + 1] !== 0) visit(this.valueAt(i));
    scan.next = end;
    return end > this.mask;
  }

  closeScan(scan: Int32Scan<V>): void {
    const open = this.scans?.filter((s) => s !== scan);
    this.scans = open && open.length > 0 ? open : undefined;
  }

  /** A delete moves the entry in slot `from` back to `to`: a scan already past `to` but not `from` would miss it. */
  private movedBack(from: number, to: number): void {
    for (const scan of this.scans!) if (from >= scan.next && to < scan.next) scan.moved.push(this.valueAt(from));
  }

  private newEntry(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    const entry = this.entriesMade++;
    if ((entry & CHUNK_MASK) === 0) this.chunks.push([]);
    // Pushed, not preallocated: V8 makes a large `new Array(n)` sparse (a dictionary), slow to read.
    const chunk = this.chunks[entry >>> CHUNK_BITS]!;
    for (let f = 0; f < this.width; f++) chunk.push(undefined);
    return entry;
  }

  /** Clears the entry, so that its value and fields can be collected, and keeps its number for reuse. */
  private freeEntry(entry: number): void {
    const chunk = this.chunks[entry >>> CHUNK_BITS]!;
    const at = (entry & CHUNK_MASK) * this.width;
    for (let f = 0; f < this.width; f++) chunk[at + f] = undefined;
    this.free.push(entry);
  }

  private grow(): void {
    const capacity = (this.mask + 1) * 2;
    if (capacity > MAX_CAPACITY) throw new RangeError(`an Int32Table holds at most ${MAX_CAPACITY / 2} entries`);
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

/** Where a scan of an Int32Table stands (openScan): the next slot, and entries moved behind it. */
export interface Int32Scan<V> {
  next: number;
  readonly moved: V[];
}

/** Entries per chunk (2^16): a chunk of `1 + fields` elements each stays far below V8's array limit. */
const CHUNK_BITS = 16;
const CHUNK_MASK = (1 << CHUNK_BITS) - 1;
const MAX_FIELDS = 64;
/** Slots at most (2^28, a 2 GiB Int32Array): 134,217,728 entries, far past what a cache is configured to hold. */
const MAX_CAPACITY = 2 ** 28;

/** A 32-bit mix (every input bit moves every output bit): neighbouring addresses land far apart. */
function home(key: number, mask: number): number {
  let h = Math.imul(key ^ (key >>> 16), 0x45d9f3b);
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  return (h ^ (h >>> 16)) & mask;
}
