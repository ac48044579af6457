import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra, waitUntil } from './support/infra.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { startControl, testTokens, type Control } from './support/control.js';

/**
 * A subject with a lone surrogate (JSON can carry `\ud800`) is not Unicode text: Kafka's
 * UTF-8 key and value hold U+FFFD in its place. Accepted, the instance that wrote it
 * listed its own copy under the original text beside the topic's, and lifting the ban
 * the topic holds left that copy listed as live until it expired.
 */
describe('control API: subjects that are not Unicode text', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  let broker: TestBroker;
  let control: Control;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    control = await startControl({ ...broker.env, CONTROL_TOKENS: tokens.entries, CONTROL_RATE_LIMIT: '100000' });
  }, 90_000);

  afterAll(async () => {
    await control?.stop();
    await broker?.close();
  });

  const listed = async () => (await control.call('GET', '/v1/bans?scope=user&includeExpired=true', { token: tokens.viewer })).body.bans.map((b: { subject: string }) => b.subject) as string[];

  it('refuses a ban on a subject with a lone surrogate (400 SUBJECT_INVALID), so no ban is listed that the topic does not hold', async () => {
    const posted = await control.call('POST', '/v1/bans', { token: tokens.operator, body: { subject: 'user:lone\ud800', duration: '1h', reason: 'x' } });
    // Whatever was answered, what the topic holds (U+FFFD) is lifted; nothing may stay listed.
    await waitUntil(async () => posted.status !== 201 || (await listed()).includes('user:lone\ufffd'), 'the topic copy of the ban', 20_000);
    if ((await listed()).includes('user:lone\ufffd')) expect((await control.call('DELETE', `/v1/bans/${encodeURIComponent('user:lone\ufffd')}`, { token: tokens.operator })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect({ status: posted.status, code: posted.body.code, listed: await listed() }).toEqual({ status: 400, code: 'SUBJECT_INVALID', listed: [] });
  });

  it('refuses an allowlist entry with a lone surrogate, and takes one with a paired surrogate (an emoji)', async () => {
    const lone = await control.call('POST', '/v1/allowlist', { token: tokens.operator, body: { entry: 'user:a\udc00b', reason: 'x' } });
    expect([lone.status, lone.body.code]).toEqual([400, 'SUBJECT_INVALID']);
    const paired = await control.call('POST', '/v1/bans', { token: tokens.operator, body: { subject: 'user:\ud83d\ude00', duration: '1h', reason: 'x' } });
    expect(paired.status).toBe(201);
    await waitUntil(async () => (await listed()).includes('user:\ud83d\ude00'), 'the emoji ban listed', 20_000);
  });
});
