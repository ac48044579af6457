import { afterAll, describe, expect, it } from 'vitest';
import { KeyPartitioner } from '@banstream/kafka';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isBanstreamError } from '@banstream/core';
import { stackDown, stackSettings, stackStatus, stackUp, type StackSettings } from '../scripts/stack/index.mjs';
import { captureLogger } from './support/infra.js';
import { ownStackEnv } from './support/own-stack.js';
import { isAlive } from './support/processes.js';
import { PRODUCE_DEADLINE_MS, createTestTopic, produceOrFail, testKafka } from './support/kafka.js';

const pidOf = (status: string) => Number(/pid (\d+)/.exec(status)?.[1]);

// A throwaway broker and Redis of its own, so killing them harms no other test.
describe('the local stack', () => {
  const dir = mkdtempSync(join(tmpdir(), 'banstream-stack-'));
  let settings: StackSettings;

  afterAll(async () => {
    if (settings) await stackDown(settings);
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts idempotently, fails a producing test fast when the broker dies, and leaves no process after down', async () => {
    settings = stackSettings(await ownStackEnv(dir));
    const lines: string[] = [];
    const first = await stackUp(settings, (l) => lines.push(l));
    const pids = stackStatus(settings);
    const kafkaPid = pidOf(pids.kafka);
    const redisPid = pidOf(pids.redis);
    expect(isAlive(kafkaPid) && isAlive(redisPid)).toBe(true);

    // A second `up` is harmless: same processes, same answer.
    const second = await stackUp(settings, (l) => lines.push(l));
    expect(second).toEqual(first);
    expect(stackStatus(settings)).toEqual(pids);
    expect(lines.filter((l) => l.includes('already running'))).toHaveLength(2);

    const { logger } = captureLogger();
    const kafka = testKafka(first.KAFKA_BROKERS, logger);
    const admin = kafka.admin();
    await admin.connect();
    const topic = await createTestTopic(admin, 'doomed', 1);
    await admin.disconnect();
    const producer = kafka.producer({ idempotent: true, createPartitioner: KeyPartitioner });
    await producer.connect();
    await produceOrFail(producer, topic, [{ key: 'k', value: Buffer.from('before the crash') }]);

    // Kill the broker while the test keeps producing.
    process.kill(kafkaPid, 'SIGKILL');
    const startedAt = Date.now();
    let failure: unknown;
    try {
      for (let i = 0; i < 1_000; i++) await produceOrFail(producer, topic, [{ key: 'k', value: Buffer.from(`after ${i}`) }]);
    } catch (error) {
      failure = error;
    }
    const elapsed = Date.now() - startedAt;
    await producer.disconnect().catch(() => undefined);

    expect(isBanstreamError(failure)).toBe(true);
    expect(['KAFKA_UNAVAILABLE', 'KAFKA_TIMEOUT']).toContain((failure as { code: string }).code);
    expect((failure as Error).message).toContain(topic);
    expect(elapsed).toBeLessThan(PRODUCE_DEADLINE_MS + 5_000);

    await stackDown(settings);
    expect(isAlive(kafkaPid)).toBe(false);
    expect(isAlive(redisPid)).toBe(false);
    expect(stackStatus(settings)).toEqual({ kafka: 'stopped', redis: 'stopped' });
  }, 120_000);
});
