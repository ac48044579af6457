import avro from 'avsc';
import type { Type } from 'avsc';
import { BanstreamError } from '@banstream/core';
import { assertItemsTakeBytes, guardedTypeHook } from './decode-guard.js';

/**
 * The one way schemas become avsc types, so every module reads and writes the same
 * JS shapes as `types.ts`: unions never wrapped (`T | null`, not `{ string: T }`),
 * records as plain data objects without avsc's helper methods, maps as objects
 * without prototype, and readers that keep the contract's rules (decode-guard.ts).
 */
const TYPE_OPTIONS = { wrapUnions: 'never', omitRecordMethods: true } as const;

/** Parses schema JSON (or passes an avsc Type through); a bad schema is CONFIG_INVALID. */
export function toAvroType(schema: unknown, origin = 'schema'): Type {
  if (avro.Type.isType(schema)) return schema as Type;
  try {
    // A fresh options object each time: avsc stores its name registry on it.
    const type = avro.Type.forSchema(schema as Parameters<typeof avro.Type.forSchema>[0], {
      ...TYPE_OPTIONS,
      typeHook: guardedTypeHook,
    });
    assertItemsTakeBytes(type, origin);
    return type;
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new BanstreamError('CONFIG_INVALID', `invalid Avro schema in ${origin}: ${reason}`, { cause });
  }
}
