import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { crc32c } from './crc32c.js';

const require = createRequire(import.meta.url);
/** kafkajs's own, one byte a step: the oracle. */
const kafkajsCrc32C = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (b: Buffer) => number;

describe('crc32c', () => {
  it('gives the CRC-32C check value of RFC 3720 and the empty input', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(32))).toBe(0x8a9136aa); // RFC 3720 B.4: 32 bytes of zeros
    expect(crc32c(Buffer.alloc(0))).toBe(0);
  });

  it('matches kafkajs for every length around the 8-byte step and at unaligned ranges', () => {
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const bytes = Buffer.from(Array.from({ length: 5000 }, () => Math.floor(random() * 256)));
    for (let length = 0; length < 40; length++) expect(crc32c(bytes, 0, length)).toBe(kafkajsCrc32C(bytes.subarray(0, length)));
    for (let i = 0; i < 200; i++) {
      const start = Math.floor(random() * 2500);
      const end = start + Math.floor(random() * 2500);
      expect(crc32c(bytes, start, end)).toBe(kafkajsCrc32C(bytes.subarray(start, end)));
    }
  });
});
