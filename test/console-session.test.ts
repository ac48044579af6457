import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '@banstream/schemas';
import { testInfra, waitUntil } from './support/infra.js';
import { TopicTail } from './support/aggregator.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { decodeAudit, startControl, testTokens, type Control } from './support/control.js';

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/** A console session against the control process and the real broker, over HTTP only (the browser tests are test/console-*.browser tests). */
describe('console sessions', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  let broker: TestBroker;
  let control: Control;
  let audit: TopicTail<AuditRecord>;

  beforeAll(async () => {
    broker = await connectTestBroker(kafkaBrokers);
    control = await startControl({ ...broker.env, CONTROL_TOKENS: tokens.entries, CONTROL_RATE_LIMIT: '100000', CONTROL_CONSOLE_TICK_MS: '250' });
    audit = await new TopicTail(broker.kafka, broker.topics.name('audit'), decodeAudit).start();
  }, 90_000);

  afterAll(async () => {
    await control?.stop();
    await audit?.stop();
    await broker?.close();
  });

  const signIn = async (token: string) => {
    const res = await fetch(`${control.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
    const setCookie = res.headers.get('set-cookie') ?? '';
    const body = (await res.json()) as { csrf: string; role: string; name: string };
    return { res, setCookie, cookie: setCookie.split(';')[0]!, ...body };
  };
  const send = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    fetch(`${control.url}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('serves the page with the strict CSP and no inline script', async () => {
    const res = await fetch(`${control.url}/console/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(CSP);
    const html = await res.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/console\/assets\/[^"]+\.js"/);
      expect(body!.trim()).toBe('');
    }
    expect(html).not.toMatch(/\son[a-z]+=/i);
    const js = await fetch(`${control.url}/console/assets/console.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-security-policy')).toBe(CSP);
    expect(await js.text()).not.toMatch(/\beval\(|new Function\(/);
  });

  it("signs in with a token: an HttpOnly, SameSite=Strict cookie, not Secure over plain HTTP, and the token's role", async () => {
    const s = await signIn(tokens.operator);
    expect(s.res.status).toBe(200);
    expect(s.setCookie).toMatch(/^banstream-session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=28800$/);
    expect(s).toMatchObject({ name: 'operator-user', role: 'operator' });
    expect((await signIn('bst_wrong')).res.status).toBe(401);
  });

  it('refuses a write without the CSRF token (403), takes it with the token and audits the actor', async () => {
    const s = await signIn(tokens.operator);
    const forged = await send('POST', '/v1/bans', { cookie: s.cookie }, { subject: '198.51.100.7', duration: '10m', reason: 'forged' });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { code: string }).code).toBe('CSRF_INVALID');
    const ok = await send('POST', '/v1/bans', { cookie: s.cookie, 'x-csrf-token': s.csrf }, { subject: '198.51.100.8', duration: '10m', reason: 'by hand' });
    expect(ok.status).toBe(201);
    const record = await waitUntil(() => audit.records.map((r) => r.value).find((a) => a?.target === 'ip:198.51.100.8'), 'the audit record of the ban');
    expect(record!.actor).toBe('operator-user');
    expect(audit.records.some((r) => r.value?.target === 'ip:198.51.100.7')).toBe(false);
  });

  it("refuses a viewer's write through the console exactly as with the token (403)", async () => {
    const s = await signIn(tokens.viewer);
    const res = await send('POST', '/v1/bans', { cookie: s.cookie, 'x-csrf-token': s.csrf }, { subject: '198.51.100.9', duration: '10m', reason: 'viewer' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe('FORBIDDEN');
    expect((await send('GET', '/v1/bans', { cookie: s.cookie })).status).toBe(200);
  });

  it('streams Overview updates: a ban placed after the stream opened shows in the next snapshots', async () => {
    const s = await signIn(tokens.operator);
    const abort = new AbortController();
    const res = await fetch(`${control.url}/console/events`, { headers: { cookie: s.cookie }, signal: abort.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('content-security-policy')).toBe(CSP);
    const snapshots: { at: number; activeBans: number; bansPerMinute: number }[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^event: overview\ndata: (.*)$/m.exec(message);
          if (data) snapshots.push(JSON.parse(data[1]!));
        }
      }
    })().catch(() => {});
    try {
      const first = await waitUntil(() => snapshots[0], 'a first snapshot');
      const placed = Date.now();
      const ban = await send('POST', '/v1/bans', { cookie: s.cookie, 'x-csrf-token': s.csrf }, { subject: '198.51.100.10', duration: '10m', reason: 'stream' });
      expect(ban.status).toBe(201);
      const seen = await waitUntil(() => snapshots.find((x) => x.activeBans > first.activeBans && x.bansPerMinute >= 1), 'a snapshot with the new ban', 10_000);
      expect(seen.at).toBeGreaterThanOrEqual(placed);
      console.log(JSON.stringify({ console_stream_update_ms: Date.now() - placed, tick_ms: 250 }));
    } finally {
      abort.abort();
      await reading;
    }
  });

  it('signs out: the cookie no longer opens the API or the stream', async () => {
    const s = await signIn(tokens.admin);
    expect((await send('GET', '/v1/bans', { cookie: s.cookie })).status).toBe(200);
    expect((await send('DELETE', '/console/session', { cookie: s.cookie })).status).toBe(403);
    const out = await send('DELETE', '/console/session', { cookie: s.cookie, 'x-csrf-token': s.csrf });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^banstream-session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0/);
    expect((await send('GET', '/v1/bans', { cookie: s.cookie })).status).toBe(401);
    expect((await send('GET', '/console/events', { cookie: s.cookie })).status).toBe(401);
    expect((await send('GET', '/console/session', { cookie: s.cookie })).status).toBe(401);
  });
});
