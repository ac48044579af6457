import avro from 'avsc';
import type { Resolver, Type } from 'avsc';
import { AvroCursor, MapObject, OFF_FAST_PATH } from './avro-cursor.js';

/**
 * avsc decodes with its own Tap, which trusts the bytes: it reads varints of any
 * length, moves backwards on a negative string length or block size, and skips a sized
 * block by its size alone, so one record could make a reader loop for ever or read
 * what another reader skips otherwise. Here avsc's type readers run on an AvroCursor
 * instead (it has the Tap's method names and the contract's rules, README "Accepted
 * bytes"), and the readers of the types whose structure avsc leaves unchecked are
 * replaced: arrays and maps (block counts and sizes, every item walked, also when
 * skipped), unions and enums (the index must exist). Every step moves forward, never
 * past the end, so a decode takes time and memory in proportion to the bytes.
 *
 * These are avsc internals (`_read`, `_skip`, the Tap's names), so avsc is pinned
 * exactly and the tests beside this file and the fuzz harness (fuzz/) fail if they
 * change. Resolvers copy the writer's `_read`/`_skip`, so resolved reads are guarded too.
 */

interface Reader {
  _read(tap: AvroCursor): unknown;
  _skip(tap: AvroCursor): void;
}

function readArray(this: { itemsType: Reader }, tap: AvroCursor): unknown[] {
  const items = this.itemsType;
  let out: unknown[] | undefined;
  let i = 0;
  for (let n = tap.block(); n !== 0; n = tap.block()) {
    const end = tap.blockEnd;
    // Sized at the first block, as avsc does: n is bounded by the bytes left.
    out ??= new Array<unknown>(n);
    while (n-- > 0) out[i++] = items._read(tap);
    tap.endBlock(end);
  }
  return out ?? [];
}

function skipArray(this: { itemsType: Reader }, tap: AvroCursor): void {
  const items = this.itemsType;
  for (let n = tap.block(); n !== 0; n = tap.block()) {
    const end = tap.blockEnd;
    while (n-- > 0) items._skip(tap);
    tap.endBlock(end);
  }
}

/** Into a MapObject (a key may be `__proto__`); a later key replaces an earlier one. */
function readMap(this: { valuesType: Reader }, tap: AvroCursor): Record<string, unknown> {
  const values = this.valuesType;
  const out = new MapObject();
  for (let n = tap.block(); n !== 0; n = tap.block()) {
    const end = tap.blockEnd;
    while (n-- > 0) {
      const key = tap.readString();
      out[key] = values._read(tap);
    }
    tap.endBlock(end);
  }
  return out;
}

function skipMap(this: { valuesType: Reader }, tap: AvroCursor): void {
  const values = this.valuesType;
  for (let n = tap.block(); n !== 0; n = tap.block()) {
    const end = tap.blockEnd;
    while (n-- > 0) {
      tap.string();
      values._skip(tap);
    }
    tap.endBlock(end);
  }
}

function readUnion(this: { types: Reader[] }, tap: AvroCursor): unknown {
  return this.types[tap.branch(this.types.length)]!._read(tap);
}

function skipUnion(this: { types: Reader[] }, tap: AvroCursor): void {
  this.types[tap.branch(this.types.length)]!._skip(tap);
}

/** `this` is the enum, or a resolver whose symbols map the writer's onto the reader's. */
function readEnum(this: { symbols: string[] }, tap: AvroCursor): string {
  return this.symbols[tap.branch(this.symbols.length)]!;
}

function skipEnum(this: { symbols: string[] }, tap: AvroCursor): void {
  tap.branch(this.symbols.length);
}

class GuardedArrayType extends avro.types.ArrayType {}
Object.assign(GuardedArrayType.prototype, { _read: readArray, _skip: skipArray });

class GuardedMapType extends avro.types.MapType {}
Object.assign(GuardedMapType.prototype, { _read: readMap, _skip: skipMap });

class GuardedUnionType extends avro.types.UnwrappedUnionType {}
Object.assign(GuardedUnionType.prototype, { _read: readUnion, _skip: skipUnion });

class GuardedRecordType extends avro.types.RecordType {}
Object.assign(GuardedRecordType.prototype, { decode: decodeRecord, fromBuffer: recordFromBuffer });

class GuardedEnumType extends avro.types.EnumType {}
Object.assign(GuardedEnumType.prototype, { _read: readEnum, _skip: skipEnum });

type Schema = ConstructorParameters<typeof avro.types.ArrayType>[0];

/** avsc `typeHook` option: builds arrays, maps, unions, enums and records as their guarded subclasses. */
export function guardedTypeHook(schema: unknown, opts: unknown): Type | undefined {
  if (Array.isArray(schema)) return new GuardedUnionType(schema as unknown as Schema, opts);
  if (schema === null || typeof schema !== 'object') return undefined;
  const kind = (schema as { type?: unknown }).type;
  if (kind === 'array') return new GuardedArrayType(schema as Schema, opts);
  if (kind === 'map') return new GuardedMapType(schema as Schema, opts);
  if (kind === 'enum') return new GuardedEnumType(schema as Schema, opts);
  if (kind === 'record' || kind === 'error') return new GuardedRecordType(schema as Schema, opts);
  return undefined;
}

/**
 * Reads one value with `reader` (a type, or a resolver from another writer) at the
 * cursor. Throws OFF_FAST_PATH with the rule broken in `cursor.problem`; avsc's own
 * errors (a union branch its resolver lacks) pass through.
 */
export function guardedRead(reader: Type | Resolver, cursor: AvroCursor): unknown {
  return (reader as unknown as Reader)._read(cursor);
}

/**
 * Records' public decodes (`decode`, `fromBuffer`) read through an AvroCursor too, so
 * no caller of the catalog's types reaches avsc's trusting Tap. A broken rule is an
 * Error naming it; avsc's answer for bytes that run out (offset -1) is kept.
 */
function decodeRecord(this: Type, buf: Buffer, pos = 0, resolver?: Resolver): { value: unknown; offset: number } {
  const cursor = new AvroCursor(buf, pos);
  try {
    return { value: guardedRead(resolver ?? this, cursor), offset: cursor.pos };
  } catch (error) {
    if (error !== OFF_FAST_PATH) throw error;
    if (cursor.problem.endsWith('past the end')) return { value: undefined, offset: -1 };
    throw new Error(`invalid ${this.name ?? this.typeName}: ${cursor.problem} (at byte ${cursor.pos})`);
  }
}

function recordFromBuffer(this: Type, buf: Buffer, resolver?: Resolver, noCheck?: boolean): unknown {
  const { value, offset } = decodeRecord.call(this, buf, 0, resolver);
  if (offset < 0) throw new Error('truncated buffer');
  if (!noCheck && offset < buf.length) throw new Error('trailing data');
  return value;
}

/**
 * Fewest bytes a value of `type` can take. An array of items that can take none could
 * claim any number of them in a few bytes, so such schemas are refused (none of
 * banstream's is one); every other block's count is bounded by the bytes left.
 */
export function assertItemsTakeBytes(type: Type, where: string): void {
  const least = new Map<Type, number>();
  const visit = (t: Type): number => {
    const known = least.get(t);
    if (known !== undefined) return known;
    least.set(t, 1); // a recursive record takes at least what its other fields take
    const u = t as unknown as { typeName: string; fields?: { type: Type }[]; types?: Type[]; itemsType?: Type; valuesType?: Type; size?: number; underlyingType?: Type };
    let bytes: number;
    switch (u.typeName) {
      case 'null':
        bytes = 0;
        break;
      case 'float':
        bytes = 4;
        break;
      case 'double':
        bytes = 8;
        break;
      case 'fixed':
        bytes = u.size!;
        break;
      case 'record':
      case 'error':
        bytes = u.fields!.reduce((sum, f) => sum + visit(f.type), 0);
        break;
      case 'array':
        if (visit(u.itemsType!) === 0) throw new Error(`${where}: an array of ${u.itemsType!.typeName} items, which can take no bytes`);
        bytes = 1;
        break;
      case 'map':
        visit(u.valuesType!);
        bytes = 1;
        break;
      default:
        if (u.types) bytes = 1 + Math.min(...u.types.map(visit));
        else bytes = u.underlyingType ? visit(u.underlyingType) : 1; // boolean, int, long, string, bytes, enum: a byte at least
    }
    least.set(t, bytes);
    return bytes;
  };
  visit(type);
}
