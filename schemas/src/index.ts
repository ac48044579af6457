export {
  CRC64_AVRO_EMPTY,
  crc64Avro,
  fingerprintToHex,
  parsingCanonicalForm,
  schemaFingerprint,
  toSignedLong,
} from './fingerprint.js';
export {
  SINGLE_OBJECT_HEADER_LENGTH,
  SINGLE_OBJECT_MAGIC,
  assertValid,
  decodeSingleObjectBody,
  encodeSingleObject,
  readFingerprint,
} from './single-object.js';
export { toAvroType } from './avro-type.js';
export { AvroCursor, LONG_LIMIT, MapObject, OFF_FAST_PATH, sameBytes } from './avro-cursor.js';
export { buildSchemaCatalog } from './catalog.js';
export type { Codec, Decoder, SchemaCatalog, SchemaSource, SchemaVersion } from './catalog.js';
export { DEFAULT_SCHEMA_DIR, loadSchemaCatalog, readSchemaSources } from './catalog-files.js';
export { checkCompatibility, findCompatibilityProblems } from './compatibility.js';
export type { Compatibility, CompatibilityProblem } from './compatibility.js';
export * from './types.js';
export { requestEvent } from './request-event.js';
export { allowlistEntry } from './allow-entry.js';
export { banWithoutEvidence } from './ban-without-evidence.js';
