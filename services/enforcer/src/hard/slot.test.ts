import { describe, expect, it } from 'vitest';
import { crc16, hashSlot } from './slot.js';
import { hardLimitKey } from './keys.js';

describe('hashSlot', () => {
  it('is Redis Cluster CRC16 (XMODEM) modulo 16384', () => {
    expect(crc16(Buffer.from('123456789'))).toBe(0x31c3);
    // Values CLUSTER KEYSLOT gives.
    expect(hashSlot('foo')).toBe(12182);
    expect(hashSlot('bar')).toBe(5061);
    expect(hashSlot('hello')).toBe(866);
  });

  it('hashes only the tag when there is one, and the whole key when the tag is empty', () => {
    expect(hashSlot('{user1000}.following')).toBe(hashSlot('{user1000}.followers'));
    expect(hashSlot('x{foo}y')).toBe(hashSlot('foo'));
    expect(hashSlot('foo{}{bar}')).toBe(crc16(Buffer.from('foo{}{bar}')) & 0x3fff);
    expect(hashSlot('foo{}{bar}')).not.toBe(hashSlot('bar'));
  });
});

describe('hardLimitKey', () => {
  it('names prefix, policy and algorithm, and tags the subject so all limits of a subject share a slot', () => {
    const a = hardLimitKey('bs:', 'signup-per-ip', 'sliding-window', 'ip:203.0.113.7');
    const b = hardLimitKey('bs:', 'login-per-ip', 'token-bucket', 'ip:203.0.113.7');
    expect(a).toBe('bs:hl:signup-per-ip:sw:{ip:203.0.113.7}');
    expect(b).toBe('bs:hl:login-per-ip:tb:{ip:203.0.113.7}');
    expect(hashSlot(a)).toBe(hashSlot(b));
    expect(hardLimitKey('bs:', 'p', 'sliding-log', 'user:42')).toBe('bs:hl:p:sl:{user:42}');
  });
});
