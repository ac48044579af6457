import { describe, expect, it } from 'vitest';
import { DLQ_MAX_KEY_BYTES, DLQ_MAX_VALUE_BYTES } from './dead-letter.js';
import { cappedPublication, inSends, kafkaRefusal, KAFKA_MAX_SEND_BYTES, producerStateLost } from './capped-sends.js';

/** What kafkajs's producer throws when the broker refuses a batch: the protocol error inside its retrier's. */
function kafkajsError(type: string, retriable = false): Error {
  const protocol = Object.assign(new Error(`broker says ${type}`), { name: 'KafkaJSProtocolError', type, retriable });
  return Object.assign(new Error(protocol.message), { name: 'KafkaJSNonRetriableError', retriable: false, cause: protocol });
}

describe('inSends', () => {
  const m = (bytes: number, key: Buffer | string | null = null) => ({ key, value: Buffer.alloc(bytes) });

  it('keeps every send under the bound, in order, a message larger than it alone', () => {
    const messages = [m(100), m(300, Buffer.alloc(50)), m(600), m(2_000), m(10), m(20)];
    expect(inSends(messages, 1_000).map((send) => send.map((x) => messages.indexOf(x)))).toEqual([[0, 1], [2], [3], [4, 5]]);
    expect(inSends([], 1_000)).toEqual([]);
  });

  it('counts string keys in UTF-8 bytes and tombstones as nothing', () => {
    const messages = [{ key: 'é'.repeat(300), value: null }, { key: 'x'.repeat(300), value: null }, m(100)];
    expect(inSends(messages, 800).map((s) => s.length)).toEqual([1, 2]);
  });

  it('never puts two cut dead letters in one send', () => {
    const cut = m(DLQ_MAX_VALUE_BYTES + 200, Buffer.alloc(DLQ_MAX_KEY_BYTES));
    expect(inSends([cut, cut, m(10)]).map((s) => s.length)).toEqual([1, 2]);
    expect(2 * (cut.value.length + DLQ_MAX_KEY_BYTES)).toBeGreaterThan(KAFKA_MAX_SEND_BYTES);
  });
});

describe('kafkaRefusal', () => {
  it("finds Kafka refusing the records themselves inside kafkajs's wrappers", () => {
    expect(kafkaRefusal(kafkajsError('MESSAGE_TOO_LARGE'))).toEqual({ type: 'MESSAGE_TOO_LARGE', message: 'broker says MESSAGE_TOO_LARGE' });
    for (const type of ['RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'INVALID_TIMESTAMP']) expect(kafkaRefusal(kafkajsError(type))?.type).toBe(type);
  });

  it('leaves alone whatever time, a new producer or an operator may cure, non-retriable ones included', () => {
    for (const type of ['BROKER_NOT_AVAILABLE', 'OUT_OF_ORDER_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'TOPIC_AUTHORIZATION_FAILED', 'NOT_LEADER_FOR_PARTITION', 'REQUEST_TIMED_OUT']) {
      expect(kafkaRefusal(kafkajsError(type))).toBeUndefined();
    }
    expect(kafkaRefusal(new Error('Connection error'))).toBeUndefined();
    expect(kafkaRefusal(Object.assign(new Error('x'), { name: 'KafkaJSNumberOfRetriesExceeded' }))).toBeUndefined();
    expect(kafkaRefusal('MESSAGE_TOO_LARGE')).toBeUndefined();
    expect(kafkaRefusal(null)).toBeUndefined();
  });

  it('ends on a cycle of causes', () => {
    const a: { name: string; cause?: unknown } = { name: 'Error' };
    a.cause = a;
    expect(kafkaRefusal(a)).toBeUndefined();
  });
});

/** A broker that refuses any send over `limit` bytes (as message.max.bytes does a batch), and any of the `refused` values, and fails the first `transient` sends. */
function broker(options: { limit: number; refused?: Set<string>; transient?: number }) {
  const written: string[] = [];
  const sends: number[] = [];
  let transient = options.transient ?? 0;
  return {
    written,
    sends,
    async send(part: { key: string; value: Buffer }[]) {
      const bytes = part.reduce((n, m) => n + m.value.length + m.key.length, 0);
      sends.push(part.length);
      if (transient-- > 0) throw new Error('Connection error: ECONNREFUSED');
      if (bytes > options.limit || part.some((m) => options.refused?.has(m.key))) throw kafkajsError('MESSAGE_TOO_LARGE');
      for (const m of part) written.push(m.key);
    },
  };
}

const msg = (key: string, bytes: number) => ({ key, value: Buffer.alloc(bytes) });

describe('cappedPublication', () => {
  it('sends what one send could not carry in sends the broker takes, in order', async () => {
    const b = broker({ limit: 1 << 20 });
    const messages = Array.from({ length: 40 }, (_, i) => msg(`k${i}`, 100 * 1024));
    await cappedPublication(messages, { send: (p) => b.send(p), refused: () => expect.unreachable() })();
    expect(b.written).toEqual(messages.map((m) => m.key));
    expect(b.sends.every((n) => n * 100 * 1024 <= KAFKA_MAX_SEND_BYTES)).toBe(true);
  });

  it('goes on from the first send not acknowledged when run again after a failure', async () => {
    const b = broker({ limit: 1 << 20, transient: 1 });
    const messages = Array.from({ length: 20 }, (_, i) => msg(`k${i}`, 100 * 1024));
    const publication = cappedPublication(messages, { send: (p) => b.send(p), refused: () => expect.unreachable() });
    await expect(publication()).rejects.toThrow('ECONNREFUSED');
    await publication();
    await publication();
    expect(b.written).toEqual(messages.map((m) => m.key));
  });

  it('never retries a send Kafka refused as it was: its messages go one by one, and one refused alone is handed over and left behind', async () => {
    const b = broker({ limit: 1 << 20, refused: new Set(['k2']) });
    const refused: string[] = [];
    const messages = Array.from({ length: 5 }, (_, i) => msg(`k${i}`, 10));
    await cappedPublication(messages, { send: (p) => b.send(p), refused: (m, r) => void refused.push(`${m.key}:${r.type}`) })();
    expect(refused).toEqual(['k2:MESSAGE_TOO_LARGE']);
    expect(b.written).toEqual(['k0', 'k1', 'k3', 'k4']);
    expect(b.sends).toEqual([5, 1, 1, 1, 1, 1]);
  });

  it('is retried again when handing over a refused message fails, and hands it over once', async () => {
    const b = broker({ limit: 1 << 20, refused: new Set(['k0']) });
    let failures = 1;
    const refused: string[] = [];
    const publication = cappedPublication([msg('k0', 10), msg('k1', 10)], {
      send: (p) => b.send(p),
      refused: async (m) => {
        if (failures-- > 0) throw new Error('DLQ away');
        refused.push(m.key);
      },
    });
    await expect(publication()).rejects.toThrow('DLQ away');
    await publication();
    expect(refused).toEqual(['k0']);
    expect(b.written).toEqual(['k1']);
  });

  it("renews the producer before sending a refused send's messages one by one (kafkajs forgot it wrote the other partitions)", async () => {
    const b = broker({ limit: 1 << 20, refused: new Set(['k1']) });
    const events: string[] = [];
    await cappedPublication([msg('k0', 10), msg('k1', 10), msg('k2', 10)], {
      send: async (p) => {
        events.push(`send ${p.length}`);
        await b.send(p);
      },
      renew: async () => void events.push('renew'),
      refused: (m) => void events.push(`refused ${m.key}`),
    })();
    expect(events).toEqual(['send 3', 'renew', 'send 1', 'send 1', 'refused k1', 'send 1']);
  });

  it('renews the producer after an error saying its state is lost, and is retried; other errors renew nothing', async () => {
    let renewed = 0;
    const failures = [kafkajsError('OUT_OF_ORDER_SEQUENCE_NUMBER'), kafkajsError('NOT_LEADER_FOR_PARTITION', true)];
    const publication = cappedPublication([msg('k0', 10)], {
      send: async () => {
        const failure = failures.shift();
        if (failure) throw failure;
      },
      renew: async () => void renewed++,
      refused: () => expect.unreachable(),
    });
    await expect(publication()).rejects.toThrow('OUT_OF_ORDER_SEQUENCE_NUMBER');
    expect(renewed).toBe(1);
    await expect(publication()).rejects.toThrow('NOT_LEADER_FOR_PARTITION');
    expect(renewed).toBe(1);
    await publication();
  });
});

describe('producerStateLost', () => {
  it("finds a lost producer state inside kafkajs's wrappers, and nothing else", () => {
    for (const type of ['OUT_OF_ORDER_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'INVALID_PRODUCER_EPOCH']) expect(producerStateLost(kafkajsError(type))).toBe(type);
    expect(producerStateLost(kafkajsError('MESSAGE_TOO_LARGE'))).toBeUndefined();
    expect(producerStateLost(new Error('Connection error'))).toBeUndefined();
  });
});
