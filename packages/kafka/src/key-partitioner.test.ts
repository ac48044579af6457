import { Partitioners, type PartitionMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { keyPartition, murmur2 } from '@banstream/core';
import { KeyPartitioner, sendUntilAnswered, unansweredMessages } from './key-partitioner.js';

const metadata = (n: number): PartitionMetadata[] => Array.from({ length: n }, (_, partitionId) => ({ partitionId, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }));

function randomKey(random: () => number): string {
  const length = Math.floor(random() * 40);
  let key = '';
  for (let i = 0; i < length; i++) {
    const r = random();
    // ASCII mostly, then 2- and 3-byte UTF-8, and a surrogate pair now and then.
    key += r < 0.7 ? String.fromCharCode(32 + Math.floor(random() * 95)) : r < 0.85 ? 'é' : r < 0.95 ? '€' : '😀';
  }
  return key;
}

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

describe('keyPartition', () => {
  const kafkajs = Partitioners.DefaultPartitioner();
  const ours = KeyPartitioner();

  it("puts every key where kafkajs 2.2.4 (the Java client's murmur2) puts it", () => {
    const random = prng(42);
    const keys = ['', 'a', 'ab', 'abc', 'abcd', 'abcde', '203.0.113.0/24', '2001:db8:1::/48', 'user:42', 'country:FR', 'x'.repeat(300), 'é'.repeat(200)];
    for (let i = 0; i < 5000; i++) keys.push(randomKey(random));
    for (const partitions of [1, 6, 12, 7]) {
      const partitionMetadata = metadata(partitions);
      for (const key of keys) {
        const expected = kafkajs({ topic: 't', partitionMetadata, message: { key, value: null } });
        expect(keyPartition(key, partitions), `${JSON.stringify(key)} over ${partitions}`).toBe(expected);
        expect(ours({ topic: 't', partitionMetadata, message: { key, value: null } })).toBe(expected);
        expect(keyPartition(Buffer.from(key), partitions)).toBe(expected);
      }
    }
  });

  it('matches the Java client on known values', () => {
    // From Apache Kafka's UtilsTest.testMurmur2: the bytes of "21" hash to -973932308.
    expect(murmur2('21')).toBe(-973932308);
    expect(murmur2('foobar')).toBe(-790332482);
    expect(murmur2('a-little-bit-long-string')).toBe(-985981536);
    expect(murmur2('a-little-bit-longer-string')).toBe(-1486304829);
    expect(murmur2('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8')).toBe(-58897971);
  });

  it('keeps an explicit partition and spreads records without a key', () => {
    const partitionMetadata = metadata(6);
    expect(ours({ topic: 't', partitionMetadata, message: { key: 'abc', partition: 4, value: null } })).toBe(4);
    const seen = new Set<number>();
    for (let i = 0; i < 60; i++) seen.add(ours({ topic: 't', partitionMetadata, message: { value: null } }));
    expect(seen.size).toBe(6);
  });
});

describe('unansweredMessages', () => {
  const place = KeyPartitioner();
  const route = (topic: string, messages: { key: string; value: string }[]) => messages.map((message) => place({ topic, partitionMetadata: metadata(3), message }));

  it('returns the messages of the partitions a send was not answered for, per topic, in order', () => {
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const a = keys.map((key) => ({ key, value: 'a' }));
    const b = keys.map((key) => ({ key, value: 'b' }));
    const pa = route('a', a);
    route('b', b);
    const answers = [0, 1, 2].filter((p) => p !== pa[0]).map((partition) => ({ topicName: 'a', partition }));
    const all = [0, 1, 2].map((partition) => ({ topicName: 'b', partition }));
    expect(
      unansweredMessages(
        [
          { topic: 'a', messages: a },
          { topic: 'b', messages: b },
        ],
        [...answers, ...all],
      ),
    ).toEqual([{ topic: 'a', messages: a.filter((_, i) => pa[i] === pa[0]) }]);
    expect(unansweredMessages([{ topic: 'b', messages: b }], all)).toEqual([]);
  });

  it('refuses messages KeyPartitioner never placed (a producer made without it)', () => {
    expect(() => unansweredMessages([{ topic: 'a', messages: [{ key: 'x', value: 'y' }] }], [])).toThrow(/not placed by KeyPartitioner/);
  });
});

describe('sendUntilAnswered', () => {
  const place = KeyPartitioner();
  /** A stand-in for a send: places every message over 3 partitions and answers for all but those in `unanswered` (one list per send). */
  const sender = (unanswered: number[][]) => {
    const sends: { topic: string; keys: string[] }[][] = [];
    const send = async (topicMessages: { topic: string; messages: { key: string; value: null }[] }[]) => {
      sends.push(topicMessages.map(({ topic, messages }) => ({ topic, keys: messages.map((m) => m.key) })));
      const skip = new Set(unanswered[sends.length - 1] ?? []);
      return topicMessages.flatMap(({ topic, messages }) =>
        [...new Set(messages.map((message) => place({ topic, partitionMetadata: metadata(3), message })))].filter((p) => !skip.has(p)).map((partition) => ({ topicName: topic, partition })),
      );
    };
    return { send, sends };
  };
  const keys = Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: null }));
  const partitionOf = (key: string) => keyPartition(key, 3);

  it('sends once when every partition is answered', async () => {
    const { send, sends } = sender([]);
    const heard: number[] = [];
    await sendUntilAnswered(send, [{ topic: 't', messages: keys }], (_, round) => heard.push(round));
    expect(sends).toHaveLength(1);
    expect(heard).toEqual([]);
  });

  it('sends the messages of unanswered partitions again, alone and in order, until each is answered', async () => {
    const { send, sends } = sender([[0, 2], [2]]);
    const heard: [number, number][] = [];
    await sendUntilAnswered(send, [{ topic: 't', messages: keys }], (left, round) => heard.push([round, left[0]!.messages.length]));
    const of = (ps: number[]) => keys.map((m) => m.key).filter((k) => ps.includes(partitionOf(k)));
    expect(sends.map((s) => s[0]!.keys)).toEqual([keys.map((m) => m.key), of([0, 2]), of([2])]);
    expect(heard).toEqual([
      [1, of([0, 2]).length],
      [2, of([2]).length],
    ]);
  });

  it('gives up when onResend throws, without sending again', async () => {
    const { send, sends } = sender([[1]]);
    const error = await sendUntilAnswered(send, [{ topic: 't', messages: keys }], () => {
      throw new Error('closed');
    }).catch((e: unknown) => e);
    expect(error).toEqual(new Error('closed'));
    expect(sends).toHaveLength(1);
  });
});
