import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import type { RequestEvent } from '@banstream/schemas';
import type { Decision, Enforcer } from './enforcer.js';
import { banstreamPlugin } from './plugin.js';

describe('banstreamPlugin country', () => {
  it('checks and publishes the country the edge reads from its header', async () => {
    const checked: unknown[] = [];
    const enforcer = {
      check: async (input: unknown) => {
        checked.push(input);
        return { allowed: true, status: 200, source: 'none', reason: 'no rule applies', previews: [] } as unknown as Decision;
      },
    } as unknown as Enforcer;
    const events: RequestEvent[] = [];
    const app = Fastify();
    await app.register(banstreamPlugin, {
      enforcer,
      publisher: { publish: (e) => events.push(e) },
      edgeId: 'e1',
      country: (r) => (typeof r.headers['cf-ipcountry'] === 'string' ? r.headers['cf-ipcountry'] : undefined),
    });
    app.get('/', async () => 'ok');
    await app.inject({ url: '/', headers: { 'cf-ipcountry': 'JP' } });
    await app.inject({ url: '/' });
    await app.close();
    expect(checked).toMatchObject([{ country: 'JP' }, {}]);
    expect((checked[1] as Record<string, unknown>).country).toBeUndefined();
    expect(events.map((e) => e.country)).toEqual(['JP', null]);
  });
});

describe('banstreamPlugin route', () => {
  it('checks with the same route template it publishes, so route-keyed policies apply', async () => {
    const checked: { route?: string | null }[] = [];
    const enforcer = {
      check: async (input: { route?: string | null }) => {
        checked.push(input);
        return { allowed: true, status: 200, source: 'none', reason: 'no rule applies', previews: [] } as unknown as Decision;
      },
    } as unknown as Enforcer;
    const events: RequestEvent[] = [];
    const app = Fastify();
    await app.register(banstreamPlugin, { enforcer, publisher: { publish: (e) => events.push(e) }, edgeId: 'e1' });
    app.get('/users/:id', async () => 'ok');
    await app.inject({ url: '/users/42?x=1' });
    await app.close();
    expect(events.map((e) => e.route)).toEqual(['/users/:id']);
    expect(checked.map((c) => c.route)).toEqual(events.map((e) => e.route));
  });
});

describe('banstreamPlugin events', () => {
  const allowAll = {
    check: async () => ({ allowed: true, status: 200, source: 'none', reason: 'no rule applies', previews: [] }) as unknown as Decision,
  } as unknown as Enforcer;

  it('dates each event when the request is answered, not when it began, however slowly the client sent it', async () => {
    const events: RequestEvent[] = [];
    const app = Fastify();
    await app.register(banstreamPlugin, { enforcer: allowAll, publisher: { publish: (e) => events.push(e) }, edgeId: 'e1' });
    app.post('/login', async () => 'no');
    const body = new Readable({ read() {} });
    setTimeout(() => body.push(null), 300);
    const began = Date.now();
    await app.inject({ method: 'POST', url: '/login', headers: { 'content-type': 'text/plain' }, payload: body });
    const answered = Date.now();
    await app.close();
    expect(events).toHaveLength(1);
    // Dated at its start, the event would be 300 ms behind its neighbours: late, past a grace that short.
    expect(events[0]!.timestamp).toBeGreaterThanOrEqual(began + 290);
    expect(events[0]!.timestamp).toBeLessThanOrEqual(answered);
  });

  it('publishes the path in the normal form the gateway and the aggregator match, without its query', async () => {
    const events: RequestEvent[] = [];
    const app = Fastify();
    await app.register(banstreamPlugin, { enforcer: allowAll, publisher: { publish: (e) => events.push(e) }, edgeId: 'e1' });
    app.get('/admin', async () => 'admin');
    for (const url of ['/%61dmin?token=secret', '/admin#x', '/adm%69n']) await app.inject({ url });
    await app.close();
    expect(events.map((e) => e.path)).toEqual(['/admin', '/admin', '/admin']);
  });
});

describe('banstreamPlugin region and ASN', () => {
  it('checks and publishes the region and ASN the edge knows, so policies on them count and apply alike', async () => {
    const checked: { region?: string; asn?: number }[] = [];
    const enforcer = {
      check: async (input: { region?: string; asn?: number }) => {
        checked.push(input);
        return { allowed: true, status: 200, source: 'none', reason: 'no rule applies', previews: [] } as unknown as Decision;
      },
    } as unknown as Enforcer;
    const events: RequestEvent[] = [];
    const app = Fastify();
    await app.register(banstreamPlugin, { enforcer, publisher: { publish: (e) => events.push(e) }, edgeId: 'e1', region: () => 'FR-IDF', asn: () => 13335 });
    app.get('/', async () => 'ok');
    await app.inject({ url: '/' });
    await app.close();
    expect(checked).toMatchObject([{ region: 'FR-IDF', asn: 13335 }]);
    expect(events.map((e) => [e.region, e.asn])).toEqual([['FR-IDF', 13335]]);
  });
});
