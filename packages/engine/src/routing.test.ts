import { describe, expect, it } from 'vitest';
import { attributesFromRequest, compilePolicy } from '@banstream/core';
import { eventKeyOfSubject, isPartitionLocal, partitionFor, routeOf } from './routing.js';

const policy = (key: string[]) => compilePolicy({ id: 'p', key, threshold: { count: 1, interval: '1m' }, action: { type: 'throttle' } });

describe('routing', () => {
  it('counts subjects that pin a /24 or /48 locally and repartitions the rest', () => {
    expect(isPartitionLocal(policy(['ip']))).toBe(true);
    expect(isPartitionLocal(policy(['prefix']))).toBe(true);
    expect(isPartitionLocal(policy(['prefix/28,56']))).toBe(true);
    expect(isPartitionLocal(policy(['user', 'ip']))).toBe(true);
    expect(isPartitionLocal(policy(['prefix/16']))).toBe(false);
    expect(isPartitionLocal(policy(['prefix/24,32']))).toBe(false);
    expect(isPartitionLocal(policy(['user']))).toBe(false);
    expect(isPartitionLocal(policy(['country']))).toBe(false);
  });

  it('splits a subject into scope and value, and its counting key into prefix and value', () => {
    const attrs = attributesFromRequest({ ip: '203.0.113.7', method: 'GET', host: 'a.example', path: '/', userId: '42', country: 'FR', timestamp: 0 });
    for (const key of [['ip'], ['user'], ['country'], ['prefix/16'], ['user', 'ip']]) {
      const p = policy(key);
      const route = routeOf(p);
      const value = route.valueOf(attrs)!;
      expect(route.scope + value, key.join()).toBe(p.subjectOf(attrs));
      expect(route.keyPrefix + value, key.join()).toBe(`p|${p.subjectOf(attrs)}`);
    }
    expect(routeOf(policy(['ip'])).scope).toBe('ip:');
    expect(routeOf(policy(['user', 'ip'])).scope).toBe('');
    const anonymous = attributesFromRequest({ ip: '203.0.113.7', method: 'GET', host: 'a.example', path: '/', timestamp: 0 });
    expect(routeOf(policy(['user'])).valueOf(anonymous)).toBeUndefined();
  });

  it('finds the events key of a local subject', () => {
    expect(eventKeyOfSubject('ip:203.0.113.7')).toBe('203.0.113.0/24');
    expect(eventKeyOfSubject('cidr:203.0.113.0/24')).toBe('203.0.113.0/24');
    expect(eventKeyOfSubject('ip:2001:db8::1|user:4')).toBe('2001:db8::/48');
    expect(eventKeyOfSubject('user:4')).toBeUndefined();
  });

  it('partitions like the Java client and kafkajs (murmur2)', () => {
    // Hashes from the Kafka Java client's UtilsTest.testMurmur2; partition = (hash & 0x7fffffff) % n.
    const vectors: [string, number][] = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['abc', 479470107],
    ];
    for (const [key, hash] of vectors) expect(partitionFor(key, 1_000_003)).toBe((hash & 0x7fffffff) % 1_000_003);
    expect(new Set(Array.from({ length: 200 }, (_, i) => partitionFor(`user:${i}`, 12))).size).toBe(12);
  });
});
