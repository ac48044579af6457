import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_NAMES, type DlqRecord } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { encodeBan, manualBan } from './support/bans.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { produceOrFail } from './support/kafka.js';
import { describeProcess, exitWithin, freePort, spawnService, type RunningProcess } from './support/processes.js';
import { catalog, sumMetric, TopicTail } from './support/aggregator.js';
import { startControl, type Control } from './support/control.js';

interface Sidecar {
  proc: RunningProcess;
  url: string;
}

/**
 * A garbage record on the bans topic, read by two enforcer sidecars and the control
 * service: every reader skips it, counts it by feed and reason and goes on applying
 * the next records; only the control service writes it to the DLQ, once.
 */
describe('compacted feeds: a record that cannot be applied', () => {
  const { kafkaBrokers, redisUrl } = testInfra();
  let broker: TestBroker | undefined;
  let control: Control | undefined;
  const sidecars: Sidecar[] = [];

  async function startSidecar(): Promise<Sidecar> {
    const port = await freePort();
    const proc = spawnService('enforcer', { ...broker!.env, REDIS_URL: redisUrl, HTTP_PORT: String(port), LOG_LEVEL: 'warn', ENFORCER_REDIS_KEY_PREFIX: broker!.topics.prefix });
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(
      async () => (await fetch(`${url}/readyz`)).status === 200,
      () => `enforcer ready (${describeProcess(proc)})`,
      60_000,
      50,
    );
    const sidecar = { proc, url };
    sidecars.push(sidecar);
    return sidecar;
  }
  const skipped = async (url: string) => sumMetric(await (await fetch(`${url}/metrics`)).text(), 'banstream_feed_records_skipped_total', 'feed="bans",reason="SCHEMA_BAD_MAGIC"');
  const allowed = async (s: Sidecar, ip: string) => {
    const res = await fetch(`${s.url}/v1/check`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ip, method: 'GET', host: 'shop.example', path: '/' }) });
    return ((await res.json()) as { allowed: boolean }).allowed;
  };

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers, 3);
  }, 60_000);

  afterAll(async () => {
    for (const s of sidecars) {
      s.proc.child.kill('SIGTERM');
      await exitWithin(s.proc, 15_000).catch(() => s.proc.child.kill('SIGKILL'));
    }
    await control?.stop();
    await broker?.close();
  });

  it('is skipped and counted by every reader, dead-lettered once by the control service, and the next ban applies', async () => {
    const { kafka, producer, topics, admin } = broker!;
    control = await startControl({ ...broker!.env, LOG_LEVEL: 'warn' });
    const readers = await Promise.all([startSidecar(), startSidecar()]);
    const dlq = await new TopicTail<DlqRecord>(kafka, topics.name('dlq'), (b) => catalog.codec(SCHEMA_NAMES.dlqRecord).decode(b)).start();
    try {
      const garbage = Buffer.from('garbage, not a Ban');
      const ban = manualBan('ip:203.0.113.51');
      // Same key, so same partition: the ban is the record right after the garbage.
      await produceOrFail(producer, topics.name('bans'), [{ key: ban.subject, value: garbage }]);
      await produceOrFail(producer, topics.name('bans'), [{ key: ban.subject, value: encodeBan(ban) }]);

      for (const s of readers) {
        await waitUntil(async () => (await allowed(s, '203.0.113.51')) === false, 'the ban after the garbage applied', 15_000, 50);
        await waitUntil(
          async () => (await skipped(s.url)) === 1,
          () => `the sidecar to count the skipped record (${describeProcess(s.proc)})`,
          15_000,
        );
      }
      await waitUntil(async () => (await skipped(control!.url)) === 1, 'the control service to count the skipped record', 15_000);
      await waitUntil(() => dlq.records.length >= 1, 'the dead letter', 15_000);
      // Every reader has read the record; the one copy is the control service's.
      const [end] = await admin.fetchTopicOffsets(topics.name('dlq'));
      expect(end!.high).toBe('1');
      expect(dlq.records[0]!.value).toMatchObject({ originalTopic: topics.name('bans'), reasonCode: 'SCHEMA_BAD_MAGIC', key: Buffer.from(ban.subject), value: garbage });
      expect(control.proc.output()).toContain('record skipped unapplied');
    } finally {
      await dlq.stop();
    }
  }, 180_000);
});
