import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBanstreamError } from '@banstream/core';
import type { GeoAlert } from '@banstream/schemas';
import { deliver } from './deliver.js';
import { signatureHeaders, slackBody } from './slack-body.js';

const alert: GeoAlert = {
  alertId: 'geo-FR-1780276800000',
  scope: 'country',
  code: 'FR',
  state: 'fired',
  currentRate: 12.5,
  baselineRate: 0.8,
  zScore: 14.2,
  ratio: 15.6,
  hourOfWeek: 1,
  at: 1_780_276_800_000,
  timeZone: 'Europe/Paris',
  localHourOfWeek: 3,
};

describe('slack body and signature', () => {
  it('says what spiked, by how much, against which hour, in Slack text and blocks', () => {
    const body = slackBody(alert);
    expect(body.text).toBe(':rotating_light: Traffic spike from FR (country): 13 req/s, 15.6× the 0.80 req/s usual for Monday 03:00 Europe/Paris (z 14.2).');
    expect(JSON.stringify(body.blocks)).toContain('geo-FR-1780276800000');
    expect(slackBody({ ...alert, state: 'resolved', currentRate: 0.9 }).text).toMatch(/^:white_check_mark: Resolved: traffic from FR \(country\) is back to normal: 0.90 req\/s/);
    expect(slackBody({ ...alert, localHourOfWeek: null }).text).toContain('Monday 01:00 UTC');
  });

  it('signs v1:<timestamp>:<body> with HMAC-SHA256, and nothing without a secret', () => {
    const headers = signatureHeaders('{"text":"x"}', 'a-shared-secret-0123', 1_700_000_000_123);
    expect(headers['x-banstream-timestamp']).toBe('1700000000');
    // echo -n 'v1:1700000000:{"text":"x"}' | openssl dgst -sha256 -hmac a-shared-secret-0123
    expect(headers['x-banstream-signature']).toBe('v1=3f3a45286e721a3d4b5df81abb52067d7ed6039640646f2122d4eb8b6dfd559e');
    expect(signatureHeaders('{"text":"x"}', 'a-shared-secret-0123', 1_700_000_000_999)).toEqual(headers);
    expect(signatureHeaders('{"text":"x"}', undefined, 0)).toEqual({});
  });
});

describe('deliver', () => {
  const answers: number[] = [];
  const seen: string[] = [];
  let url = '';
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push(body);
      const status = answers.shift() ?? 200;
      res.writeHead(status, status === 429 ? { 'retry-after': '1' } : {}).end();
    });
  });
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;
  });
  afterAll(() => server.close());

  const target = () => ({ url, timeoutMs: 2_000, retries: 3, backoffMs: 100 });
  const hooks = (waits: number[], retries: string[]) => ({ sleep: async (ms: number) => void waits.push(ms), random: () => 1, onRetry: (reason: string) => void retries.push(reason) });

  it('retries 5xx and 429 with doubling backoff (at least Retry-After), then succeeds', async () => {
    answers.push(500, 429, 503);
    seen.length = 0;
    const waits: number[] = [];
    const retries: string[] = [];
    expect(await deliver(target(), '{"text":"hi"}', {}, hooks(waits, retries))).toBe(4);
    expect(retries).toEqual(['HTTP 500', 'HTTP 429', 'HTTP 503']);
    expect(waits).toEqual([100, 1000, 400]);
    expect(seen).toEqual(Array(4).fill('{"text":"hi"}'));
  });

  it('gives up after the retries, and at once on a 4xx that a retry cannot fix, never naming the URL', async () => {
    answers.push(500, 500, 500, 500);
    const gaveUp = await deliver(target(), '{}', {}, hooks([], [])).catch((e: unknown) => e);
    expect(isBanstreamError(gaveUp, 'WEBHOOK_UNAVAILABLE') && gaveUp.message).toBe('webhook failed 4 times, last: HTTP 500');
    answers.push(404);
    const refused = await deliver(target(), '{}', {}, hooks([], [])).catch((e: unknown) => e);
    expect(isBanstreamError(refused, 'WEBHOOK_REFUSED') && refused.retryable).toBe(false);
    const unreachable = await deliver({ ...target(), url: 'http://127.0.0.1:1/secret-token', retries: 0 }, '{}', {}, hooks([], [])).catch((e: unknown) => e);
    expect(isBanstreamError(unreachable, 'WEBHOOK_UNAVAILABLE') && unreachable.message).toMatch(/^webhook failed 1 times, last: \S+$/);
    expect((unreachable as Error).message).not.toContain('secret-token');
  });
});
