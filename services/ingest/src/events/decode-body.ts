import { isBanstreamError } from '@banstream/core';
import type { Codec, RequestEventBatch } from '@banstream/schemas';
import { CHUNKED_FROM_BYTES, parseJsonArrayInChunks } from './json-array.js';

export type DecodedBody = { ok: true; events: unknown[] } | { ok: false; code: 'BAD_JSON' | 'BAD_AVRO'; message: string };

/** A JSON array of events. */
export function decodeJsonBody(body: Buffer): DecodedBody {
  if (body.length > CHUNKED_FROM_BYTES) {
    const events = parseJsonArrayInChunks(body);
    if (events !== undefined) return { ok: true, events };
    // Not one well-formed array: parsed whole below, for JSON.parse's own message.
  }
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (error) {
    return { ok: false, code: 'BAD_JSON', message: `the body is not JSON: ${(error as Error).message}` };
  }
  if (!Array.isArray(value)) return { ok: false, code: 'BAD_JSON', message: `the body must be a JSON array of events, not ${value === null ? 'null' : typeof value}` };
  return { ok: true, events: value };
}

/** One RequestEventBatch in Avro single-object encoding, of any version the catalog knows. */
export function decodeAvroBody(body: Buffer, codec: Codec<RequestEventBatch>): DecodedBody {
  try {
    return { ok: true, events: codec.decode(body).events };
  } catch (error) {
    if (!isBanstreamError(error)) throw error;
    return { ok: false, code: 'BAD_AVRO', message: `the body is not a RequestEventBatch in Avro single-object encoding (${error.code}): ${error.message}` };
  }
}
