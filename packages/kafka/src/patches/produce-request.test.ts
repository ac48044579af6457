import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeProduceRequest, type ProduceMessage, type ProduceRequestArgs } from './produce-request.js';
import { fixKafkajsProduceRequest, onePassProduceRequest, PRODUCE_V3_MODULE } from './produce-request-fix.js';
import { freshKafkajsModule } from '../../../../test/support/kafkajs-module.js';

const require = createRequire(import.meta.url);
type Factory = (args: ProduceRequestArgs) => { apiVersion: number; encode: () => Promise<{ buffer: Buffer }> };
const Long = require('kafkajs/src/utils/long.js') as { fromValue(v: unknown): unknown };
const GZIP = 1;
const NOW = 1_764_000_123_456;

/** kafkajs's own v3 request factory, loaded afresh so a patched module cache does not hide it. */
function kafkajsProduceRequest(): Factory {
  return freshKafkajsModule(PRODUCE_V3_MODULE);
}

let original: Factory | undefined;

async function kafkajsBytes(args: ProduceRequestArgs): Promise<Buffer> {
  original ??= kafkajsProduceRequest();
  vi.spyOn(Date, 'now').mockReturnValue(NOW);
  return Buffer.from((await original(args).encode()).buffer);
}

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** Requests as kafkajs's producer builds them, with the awkward values it allows. */
function randomRequest(random: () => number): ProduceRequestArgs {
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  // Only the chosen alternative is built: building all of them made this test take seconds.
  const oneOf = (...makers: (() => unknown)[]): unknown => pick(makers)();
  const bytes = (max: number) => {
    const out = Buffer.alloc(int(max));
    for (let i = 0; i < out.length; i++) out[i] = int(256);
    return out;
  };
  const text = () =>
    oneOf(
      () => '',
      () => 'k',
      () => `user-${int(1e6)}`,
      () => 'é€😀-ключ',
      () => 'x'.repeat(int(300)),
    );
  const payload = (): unknown =>
    oneOf(
      () => null,
      () => undefined,
      text,
      () => bytes(40),
      () => bytes(3000),
      () => Buffer.alloc(0),
    );
  const headers = (): unknown =>
    oneOf(
      () => undefined,
      () => ({}),
      () => ({ trace: text() }),
      () => ({ a: bytes(10), b: [text(), bytes(70)], ü: [] }),
    );
  const base = NOW - int(1e6);
  const timestamp = (): unknown =>
    oneOf(
      () => undefined,
      () => null,
      () => base + int(1e6),
      () => `${base + int(1e6)}`,
      () => base,
    );
  const message = (): ProduceMessage => ({ key: payload(), value: payload(), timestamp: timestamp(), headers: headers() });
  const partition = () => ({ partition: int(64), firstSequence: pick([undefined, 0, int(2 ** 31)]), messages: Array.from({ length: 1 + int(30) }, message) });
  return {
    acks: pick([-1, 0, 1]),
    timeout: int(2 ** 31),
    transactionalId: pick([null, undefined, '', 'tx-é']),
    producerId: pick([undefined, '-1', '22', `${int(2 ** 31)}`, '9223372036854775807', Long.fromValue(-1), Long.fromValue(int(1e6)), Long.fromValue(2n ** 40n + 7n), Long.fromValue(-(2n ** 62n))]),
    producerEpoch: pick([undefined, 0, int(32767)]),
    compression: pick([undefined, 0]),
    topicData: Array.from({ length: 1 + int(3) }, (_, t) => ({ topic: pick([`events-${t}`, `tópico-${t}`]), partitions: Array.from({ length: 1 + int(4) }, partition) })),
  };
}

const one = (message: ProduceMessage, extra: Partial<ProduceRequestArgs> = {}): ProduceRequestArgs => ({
  acks: -1,
  timeout: 30_000,
  topicData: [{ topic: 't', partitions: [{ partition: 0, messages: [message] }] }],
  ...extra,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('encodeProduceRequest', () => {
  it('writes the same bytes as kafkajs for 200 random requests', async () => {
    const random = prng(20261125);
    for (let i = 0; i < 200; i++) {
      const args = randomRequest(random);
      const ours = encodeProduceRequest(args, NOW);
      expect(ours, `request ${i}`).toBeDefined();
      expect(ours!.equals(await kafkajsBytes(args)), `request ${i}`).toBe(true);
    }
  });

  it('leaves to kafkajs what it would not write the same way', () => {
    const leftAlone: [string, ProduceRequestArgs][] = [
      ['compression', one({ value: 'v' }, { compression: GZIP })],
      ['a number as key', one({ key: 5, value: 'v' })],
      ['a null header value', one({ value: 'v', headers: { h: null } })],
      ['an empty string timestamp', one({ value: 'v', timestamp: '' })],
      ['a timestamp with a leading zero', one({ value: 'v', timestamp: `0${NOW}` })],
      ['a fractional timestamp', one({ value: 'v', timestamp: NOW + 0.5 })],
      ['timestamp 0 (now, to kafkajs), a delta beyond 32 bits', one({ value: 'v', timestamp: 0 })],
      ['a negative timestamp', one({ value: 'v', timestamp: -5 })],
      ['a null producer id', one({ value: 'v' }, { producerId: null })],
      ['a producer id kafkajs reads as zero', one({ value: 'v' }, { producerId: 'NaN' })],
      ['acks beyond 16 bits', one({ value: 'v' }, { acks: 70_000 })],
      ['a partition without messages', { acks: -1, timeout: 1, topicData: [{ topic: 't', partitions: [{ partition: 0, messages: [] }] }] }],
    ];
    for (const [what, args] of leftAlone) expect(encodeProduceRequest(args, NOW), what).toBeUndefined();
  });

  it('orders timestamps of different lengths as kafkajs does (as text), by leaving them to it', async () => {
    // kafkajs sorts timestamps as text: [999, 1000] gives firstTimestamp 1000, a negative delta.
    const args: ProduceRequestArgs = {
      acks: 1,
      timeout: 1,
      topicData: [
        {
          topic: 't',
          partitions: [
            {
              partition: 0,
              messages: [
                { value: 'a', timestamp: 999 },
                { value: 'b', timestamp: 1000 },
              ],
            },
          ],
        },
      ],
    };
    expect(encodeProduceRequest(args, NOW)).toBeUndefined();
    const patched = onePassProduceRequest(kafkajsProduceRequest() as never) as unknown as Factory;
    vi.spyOn(Date, 'now').mockReturnValue(NOW);
    expect(Buffer.from((await patched(args).encode()).buffer).equals(await kafkajsBytes(args))).toBe(true);
  });
});

describe('fixKafkajsProduceRequest', () => {
  it('answers kafkajs Produce v3 to v7 with the same bytes, and kafkajs encodes what the fast path leaves', async () => {
    expect(fixKafkajsProduceRequest()).toBe(true);
    const random = prng(99);
    for (const version of [3, 4, 5, 6, 7]) {
      const factory = require(`kafkajs/src/protocol/requests/produce/v${version}/request.js`) as Factory;
      for (const args of [randomRequest(random), one({ value: 'v' }, { compression: GZIP })]) {
        vi.spyOn(Date, 'now').mockReturnValue(NOW);
        const request = factory(args);
        expect(request.apiVersion).toBe(version);
        expect(Buffer.from((await request.encode()).buffer).equals(await kafkajsBytes(args)), `v${version}`).toBe(true);
      }
    }
  });
});
