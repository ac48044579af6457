import avro from 'avsc';
import type { Type } from 'avsc';

/**
 * avsc trusts the block counts of arrays and maps: a 13-byte body claiming 10^7
 * events made it loop for seconds and allocate gigabytes before noticing that the
 * buffer had run out. A poison record must not take a consumer down, so each array
 * and map of a type gets a read (and skip) that stops as soon as the read position
 * passes the end of the buffer; avsc then reports the body as truncated.
 *
 * Arrays and maps are built (through avsc's public `typeHook` option) as subclasses
 * whose `_read`/`_skip` mirror avsc 5.7.9's own loops plus that check. Those methods
 * and the Tap's `pos`/`buf` are avsc internals: the version is pinned exactly, and
 * the block-count tests fail if they change. Resolvers copy the reader's `_read`, so
 * resolved reads are guarded too. Items that encode to zero
 * bytes (null, empty records) never overrun, so they stay unbounded: no banstream
 * schema has arrays or maps of those.
 */

interface Tap {
  buf: Buffer;
  pos: number;
  readLong(): number;
  skipLong(): void;
  readString(): string;
  skipString(): void;
}
interface Reader {
  _read(tap: Tap): unknown;
  _skip(tap: Tap): void;
}
const overrun = (tap: Tap): boolean => tap.pos > tap.buf.length;

/** Reads the block count; a negative count is followed by the block's byte size. */
function blockCount(tap: Tap): number {
  const n = tap.readLong();
  if (n >= 0) return n;
  tap.skipLong();
  return -n;
}

function readArray(this: { itemsType: Reader }, tap: Tap): unknown[] {
  const out: unknown[] = [];
  for (let n = blockCount(tap); n !== 0 && !overrun(tap); n = blockCount(tap)) {
    while (n-- > 0) {
      if (overrun(tap)) return out;
      out.push(this.itemsType._read(tap));
    }
  }
  return out;
}

function skipArray(this: { itemsType: Reader }, tap: Tap): void {
  for (let n = tap.readLong(); n !== 0 && !overrun(tap); n = tap.readLong()) {
    if (n < 0) {
      // Not `tap.pos += tap.readLong()`: that adds the size to the position before the size was read.
      const size = tap.readLong();
      tap.pos += size;
      continue;
    }
    while (n-- > 0 && !overrun(tap)) this.itemsType._skip(tap);
  }
}

function readMap(this: { valuesType: Reader }, tap: Tap): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let n = blockCount(tap); n !== 0 && !overrun(tap); n = blockCount(tap)) {
    while (n-- > 0) {
      if (overrun(tap)) return out;
      const key = tap.readString();
      out[key] = this.valuesType._read(tap);
    }
  }
  return out;
}

function skipMap(this: { valuesType: Reader }, tap: Tap): void {
  for (let n = tap.readLong(); n !== 0 && !overrun(tap); n = tap.readLong()) {
    if (n < 0) {
      // Not `tap.pos += tap.readLong()`: that adds the size to the position before the size was read.
      const size = tap.readLong();
      tap.pos += size;
      continue;
    }
    while (n-- > 0 && !overrun(tap)) {
      tap.skipString();
      this.valuesType._skip(tap);
    }
  }
}

class GuardedArrayType extends avro.types.ArrayType {}
Object.assign(GuardedArrayType.prototype, { _read: readArray, _skip: skipArray });

class GuardedMapType extends avro.types.MapType {}
Object.assign(GuardedMapType.prototype, { _read: readMap, _skip: skipMap });

type Schema = ConstructorParameters<typeof avro.types.ArrayType>[0];

/** avsc `typeHook` option: builds every array and map as its guarded subclass. */
export function guardedTypeHook(schema: unknown, opts: unknown): Type | undefined {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return undefined;
  const kind = (schema as { type?: unknown }).type;
  if (kind === 'array') return new GuardedArrayType(schema as Schema, opts);
  if (kind === 'map') return new GuardedMapType(schema as Schema, opts);
  return undefined;
}
