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
      enforcer, publisher: { publish: (e) => events.push(e) }, edgeId: 'e1',
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
