import { BanstreamError } from '@banstream/core';
import type { Resolver, Type, types } from 'avsc';
import { AvroCursor, OFF_FAST_PATH } from './avro-cursor.js';
import { guardedRead } from './decode-guard.js';
import { locateProblem } from './decode-locate.js';
import { fingerprintToHex } from './fingerprint.js';

/**
 * Avro single-object encoding: `C3 01`, the writer schema's CRC-64-AVRO fingerprint
 * as 8 little-endian bytes, then the Avro binary body. The header lets a reader find
 * the writer schema of every record without a registry round trip.
 *
 * Every failure is a BanstreamError with a stable code (the DLQ records it), never a
 * raw exception from avsc: consumers must be able to route bad bytes, not crash.
 */

export const SINGLE_OBJECT_MAGIC: readonly [number, number] = [0xc3, 0x01];
export const SINGLE_OBJECT_HEADER_LENGTH = 10;

/** Checks `value` against `type`; throws SCHEMA_INVALID_VALUE naming every bad field path. */
export function assertValid(type: Type, value: unknown, label: string): void {
  // One pass for what is valid (the common case); the two below only word the problems.
  if (type.isValid(value, { noUndeclaredFields: true })) return;
  const problems: string[] = [];
  const hook = (path: string[], _val: unknown, t: Type): void => {
    problems.push(`${path.length > 0 ? path.join('.') : '(root)'}: expected ${describe(t)}`);
  };
  if (type.isValid(value, { errorHook: hook })) {
    // A second pass only for undeclared fields: avsc reports them at record level and
    // stops there, which would hide the field-level problems of the first pass.
    type.isValid(value, {
      noUndeclaredFields: true,
      errorHook: (path, val, t) => {
        const extra = undeclaredFields(val, t);
        problems.push(`${path.length > 0 ? path.join('.') : '(root)'}: undeclared field(s) ${extra.join(', ')}`);
      },
    });
  }
  if (problems.length === 0) return;
  // Values are left out on purpose: headers and ids may be personal or secret.
  throw new BanstreamError('SCHEMA_INVALID_VALUE', `invalid ${label}: ${problems.join('; ')}`, {
    details: { schema: label, problems },
  });
}

/**
 * Where values are encoded before they are copied out at their size. avsc's own
 * toBuffer() writes into 1 KiB and, for anything larger, writes the value a second
 * time; a batch of repartition entries is several KiB.
 */
let scratch = Buffer.allocUnsafeSlow(64 << 10);
/** Larger values get a buffer of their own, not kept. */
const MAX_SCRATCH = 1 << 20;

/** Validates, then encodes `value` with the single-object header for `fingerprint`. */
export function encodeSingleObject(type: Type, fingerprint: bigint, value: unknown, label: string): Buffer {
  assertValid(type, value, label);
  let buf = scratch;
  let end = type.encode(value, buf, SINGLE_OBJECT_HEADER_LENGTH);
  if (end < 0) {
    // encode() answers how many bytes it lacked.
    buf = Buffer.allocUnsafeSlow(Math.max(buf.length * 2, buf.length - end));
    if (buf.length <= MAX_SCRATCH) scratch = buf;
    end = type.encode(value, buf, SINGLE_OBJECT_HEADER_LENGTH);
  }
  const out = Buffer.allocUnsafe(end);
  buf.copy(out, SINGLE_OBJECT_HEADER_LENGTH, SINGLE_OBJECT_HEADER_LENGTH, end);
  out[0] = SINGLE_OBJECT_MAGIC[0];
  out[1] = SINGLE_OBJECT_MAGIC[1];
  out.writeBigUInt64LE(BigInt.asUintN(64, fingerprint), 2);
  return out;
}

/**
 * Reads the writer fingerprint from the header. Wrong magic → SCHEMA_BAD_MAGIC (checked
 * first, so a JSON or plain-Avro payload is named for what it is); a header cut short →
 * SCHEMA_TRUNCATED.
 */
export function readFingerprint(buf: Uint8Array): bigint {
  const bytes = asBuffer(buf);
  const magicOk = (bytes.length < 1 || bytes[0] === SINGLE_OBJECT_MAGIC[0]) && (bytes.length < 2 || bytes[1] === SINGLE_OBJECT_MAGIC[1]);
  if (!magicOk) {
    throw new BanstreamError('SCHEMA_BAD_MAGIC', 'not an Avro single-object encoding: bad magic bytes', {
      details: { magic: bytes.subarray(0, 2).toString('hex') },
    });
  }
  if (bytes.length < SINGLE_OBJECT_HEADER_LENGTH) {
    throw new BanstreamError('SCHEMA_TRUNCATED', `single-object header needs 10 bytes, got ${bytes.length}`, {
      details: { length: bytes.length },
    });
  }
  return bytes.readBigUInt64LE(2);
}

/**
 * Decodes the body after the header with `type` (through `resolver` when the writer
 * schema, `writer`, differs), by the contract's rules (decode-guard.ts). A body that
 * breaks one, is cut short, or leaves bytes unread is SCHEMA_TRUNCATED, its message
 * naming the field, the rule and the byte offset.
 */
export function decodeSingleObjectBody(type: Type, buf: Uint8Array, fingerprint: bigint, label: string, resolver?: Resolver, writer: Type = type): unknown {
  const bytes = asBuffer(buf);
  const refuse = (problem: string, at: number, cause?: unknown) => {
    const field = cause === OFF_FAST_PATH ? locateProblem(writer, bytes, SINGLE_OBJECT_HEADER_LENGTH) : '';
    return new BanstreamError('SCHEMA_TRUNCATED', `${label} body: ${field ? `${field}: ` : ''}${problem} (at byte ${at} of ${bytes.length})`, {
      cause,
      details: { schema: label, fingerprint: fingerprintToHex(fingerprint), length: bytes.length, offset: at, problem, ...(field ? { field } : {}) },
    });
  };
  const cursor = new AvroCursor(bytes, SINGLE_OBJECT_HEADER_LENGTH);
  let value: unknown;
  try {
    value = guardedRead(resolver ?? type, cursor);
  } catch (cause) {
    throw refuse(cause === OFF_FAST_PATH ? cursor.problem : `does not decode: ${errorMessage(cause)}`, cursor.pos, cause);
  }
  if (cursor.pos !== bytes.length) throw refuse(`${bytes.length - cursor.pos} trailing byte(s)`, cursor.pos);
  return value;
}

function asBuffer(buf: Uint8Array): Buffer {
  return Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
}

function describe(t: Type): string {
  return t.name ?? t.typeName;
}

function undeclaredFields(val: unknown, t: Type): string[] {
  if (val === null || typeof val !== 'object' || t.typeName !== 'record') return ['?'];
  const declared = new Set((t as types.RecordType).fields.map((f) => f.name));
  return Object.keys(val).filter((k) => !declared.has(k));
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
