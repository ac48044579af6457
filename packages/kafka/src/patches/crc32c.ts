/**
 * CRC-32C (Castagnoli), the checksum of a Kafka record batch, eight bytes a step
 * ("slicing-by-8"). kafkajs's own goes one byte a step; over the hundreds of kilobytes
 * of a produce request that is measurable.
 */

const POLYNOMIAL = 0x82f63b78; // reflected 0x1EDC6F41
/** Eight tables of 256: TABLES[k * 256 + b] is the CRC of byte b followed by k zero bytes. */
const TABLES = new Int32Array(8 * 256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLYNOMIAL : c >>> 1;
  TABLES[n] = c;
}
for (let n = 0; n < 256; n++) {
  for (let k = 1; k < 8; k++) {
    const previous = TABLES[(k - 1) * 256 + n]!;
    TABLES[k * 256 + n] = (previous >>> 8) ^ TABLES[previous & 0xff]!;
  }
}

/** The CRC-32C of bytes [start, end) of `bytes`, as an unsigned 32-bit number. */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length): number {
  const t = TABLES;
  let crc = -1;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    crc ^= bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    crc =
      t[1792 + (crc & 0xff)]! ^
      t[1536 + ((crc >>> 8) & 0xff)]! ^
      t[1280 + ((crc >>> 16) & 0xff)]! ^
      t[1024 + (crc >>> 24)]! ^
      t[768 + bytes[i + 4]!]! ^
      t[512 + bytes[i + 5]!]! ^
      t[256 + bytes[i + 6]!]! ^
      t[bytes[i + 7]!]!;
  }
  for (; i < end; i++) crc = t[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}
