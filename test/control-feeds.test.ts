import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnforcer, type Enforcer } from '@banstream/enforcer';
import { createMetricsRegistry } from '@banstream/platform';
import type { AuditRecord } from '@banstream/schemas';
import { captureLogger, testInfra, waitUntil } from './support/infra.js';
import { TopicTail } from './support/aggregator.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { decodeAudit, startControl, testTokens, type Control } from './support/control.js';
import { FeedServer, fireholLevel1, generatedAddress, generatedNetset, spamhausDrop, vendorCsv } from './support/feed-fixtures.js';

/**
 * Blocklist feeds end to end: the control service reads real-format lists from a
 * local HTTP server, writes their entries as bans (origin feed:<name>) to the real
 * Kafka, and a library enforcer denies them; hostile sources are refused with the
 * feed's bans kept.
 */
describe('blocklist feeds', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  const server = new FeedServer();
  let broker: TestBroker;
  let control: Control;
  let enforcer: Enforcer;
  let audit: TopicTail<AuditRecord>;

  beforeAll(async () => {
    await server.start();
    broker = await connectTestBroker(kafkaBrokers);
    control = await startControl({
      ...broker.env,
      CONTROL_TOKENS: tokens.entries,
      // Feeds due are picked up this often: a new feed's first refresh is the scheduled one.
      CONTROL_BAN_SWEEP_MS: '200',
      CONTROL_FEED_TIMEOUT_MS: '3000',
      CONTROL_FEED_MAX_BYTES: String(4 * 1024 * 1024),
      // The feed server's address: loopback, refused unless allowed. 127.0.0.1 stays refused.
      CONTROL_FEED_ALLOWED_NETWORKS: '127.0.0.2/32',
      LOG_LEVEL: 'warn',
    });
    enforcer = createEnforcer({
      kafka: broker.kafka,
      admin: broker.admin,
      topicPrefix: broker.topics.prefix,
      logger: captureLogger().logger,
      registry: createMetricsRegistry('control-feeds-test', { defaultMetrics: false }),
      instanceId: 'control-feeds-test',
    });
    await enforcer.start();
    audit = await new TopicTail(broker.kafka, broker.topics.name('audit'), decodeAudit).start();
  }, 120_000);

  afterAll(async () => {
    await enforcer?.stop();
    await control?.stop();
    await audit?.stop();
    await broker?.close();
    await server.stop();
  });

  const denied = async (ip: string) => !(await enforcer.check({ ip, method: 'GET', host: 'shop.example', path: '/' })).allowed;
  const feed = async (name: string) => (await control.call('GET', `/v1/feeds/${name}`, { token: tokens.viewer })).body;
  const sync = (name: string, body: object = {}) => control.call('POST', `/v1/feeds/${name}/sync`, { token: tokens.operator, body });
  const add = (body: object, token = tokens.operator) => control.call('POST', '/v1/feeds', { token, body });
  const scheduled = (name: string) => waitUntil(async () => (await feed(name)).lastRefresh ?? undefined, `the first scheduled refresh of ${name}`, 60_000, 100);
  const feedBans = async (name: string) => {
    const res = await control.call('GET', `/v1/bans?origin=feed:${name}&limit=1000`, { token: tokens.viewer });
    return (res.body.bans as { subject: string }[]).map((b) => b.subject).sort();
  };

  it('bans a FireHOL netset on schedule, never over the allowlist nor wider than the guard rails, and a changed list lifts and adds', async () => {
    await control.call('POST', '/v1/allowlist', { token: tokens.operator, body: { entry: '203.0.113.8', reason: 'our probe' } });
    server.answers.set('/level1.netset', { body: fireholLevel1() });
    expect((await add({ name: 'level1', source: `${server.url}/level1.netset`, refresh: '1h', duration: '1d', reason: 'FireHOL level 1' })).status).toBe(201);
    const first = await scheduled('level1');
    expect(first).toMatchObject({ ok: true, added: 5, lifted: 0, skipped: { allowlisted: 1, tooWide: 1, bannedOtherwise: 0 }, tooWide: ['cidr:224.0.0.0/3'] });
    expect(await feedBans('level1')).toEqual(['cidr:0.0.0.0/8', 'cidr:192.0.2.0/25', 'cidr:198.51.100.0/24', 'cidr:203.0.113.64/26', 'ip:203.0.113.7']);
    await waitUntil(() => denied('203.0.113.7'), 'the feed ban at the enforcer', 20_000, 20);
    // Bans are keyed by subject over several partitions: the network's ban may be read a moment after the address's.
    await waitUntil(() => denied('198.51.100.33'), 'the feed network ban at the enforcer', 20_000, 20);
    expect(await enforcer.check({ ip: '198.51.100.33', method: 'GET', host: 'shop.example', path: '/' })).toMatchObject({ allowed: false, status: 403, source: 'ban', policyId: 'feed:level1' });
    expect(await denied('203.0.113.8')).toBe(false); // allowlisted: never banned
    expect(await denied('203.0.113.9')).toBe(false);

    // The list changes: 203.0.113.7 and 203.0.113.64/26 go, 203.0.113.9 comes.
    server.answers.set('/level1.netset', { body: fireholLevel1().replace('203.0.113.7\n', '').replace('203.0.113.64/26', '203.0.113.9') });
    const second = await sync('level1');
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ ok: true, entries: 4, added: 1, lifted: 2, renewed: 0 });
    await waitUntil(async () => !(await denied('203.0.113.7')) && (await denied('203.0.113.9')) && !(await denied('203.0.113.70')), 'the lift and the new ban at the enforcer', 20_000, 20);
    expect(await denied('198.51.100.33')).toBe(true);

    await waitUntil(() => audit.records.filter((r) => r.value?.action === 'feed.refresh' && r.value.target === 'level1').length === 2 || undefined, 'two refreshes audited');
    const audited = audit.records.filter((r) => r.value?.action === 'feed.refresh' && r.value.target === 'level1').map((r) => [r.value!.actor, JSON.parse(r.value!.after!)]);
    expect(audited).toMatchObject([
      ['banstream-control', { part: 1, parts: 1, added: 5, lifted: 0, skipped: { allowlisted: 1, tooWide: 1 } }],
      ['operator-user', { part: 1, parts: 1, added: 1, lifted: 2 }],
    ]);
    // Counts, not entries: no ban.add per entry.
    expect(audit.records.some((r) => r.value?.action === 'ban.add' && r.value.target === 'ip:203.0.113.9')).toBe(false);
  }, 120_000);

  it('reads Spamhaus DROP and a vendor CSV by header name', async () => {
    server.answers.set('/drop.txt', { body: spamhausDrop() });
    server.answers.set('/vendor.csv', { body: vendorCsv() });
    expect((await add({ name: 'drop', source: `${server.url}/drop.txt`, status: 429 })).status).toBe(201);
    expect((await add({ name: 'acme', source: `${server.url}/vendor.csv`, format: 'csv', column: 'indicator', header: true })).status).toBe(201);
    await scheduled('drop');
    await scheduled('acme');
    expect(await feedBans('drop')).toEqual(['cidr:192.0.2.128/26', 'cidr:198.51.100.128/25', 'cidr:2001:db8:dead::/48']);
    expect(await feedBans('acme')).toEqual(['ip:2001:db8:beef::1', 'ip:203.0.113.200', 'ip:203.0.113.201']);
    // 198.51.100.128/25 lies inside level1's /24: both bans are held, each under its own subject.
    await waitUntil(async () => (await enforcer.check({ ip: '2001:db8:dead::5', method: 'GET', host: 'h', path: '/' })).status === 429, 'the DROP ban (429) at the enforcer', 20_000, 20);
    await waitUntil(() => denied('203.0.113.201'), 'the CSV ban at the enforcer', 20_000, 20);
  }, 120_000);

  it('refuses force to an operator, and bans wider entries for an admin who forced the feed', async () => {
    server.answers.set('/wide.netset', { body: '0.0.0.0/1\n' });
    const refused = await add({ name: 'wide', source: `${server.url}/wide.netset`, force: true });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('needs admin');
    expect((await add({ name: 'wide', source: `${server.url}/wide.netset`, force: true }, tokens.admin)).status).toBe(201);
    expect(await scheduled('wide')).toMatchObject({ ok: true, added: 1, skipped: { tooWide: 0 } });
    expect((await control.call('DELETE', '/v1/feeds/wide', { token: tokens.operator })).body).toEqual({ removed: 'wide', lifted: 1 });
    expect((await control.call('POST', '/v1/feeds', { token: tokens.operator, body: { name: 'x', source: 'file:///etc/passwd' } })).body.code).toBe('FEED_SOURCE_INVALID');
    expect((await control.call('POST', '/v1/feeds', { token: tokens.operator, body: { name: 'x', source: '/etc/passwd' } })).body.detail).toContain('CONTROL_FEED_FILE_DIR');
  }, 60_000);

  it('refuses feeds on loopback, link-local or a name resolving to loopback (400), unconnected, and a redirect to them at refresh, keeping the bans', async () => {
    const internal = await new FeedServer('127.0.0.1').start();
    try {
      internal.answers.set('/secret', { body: '192.0.2.66\n' });
      for (const source of [
        `${internal.url}/secret`,
        `http://localhost:${internal.port}/secret`,
        `http://[::ffff:127.0.0.1]:${internal.port}/secret`,
        `http://2130706433:${internal.port}/secret`,
        'http://169.254.169.254/latest/meta-data/',
      ]) {
        const res = await add({ name: 'inside', source });
        expect([source, res.status, res.body.code], source).toEqual([source, 400, 'FEED_ADDRESS_REFUSED']);
        expect(res.body.detail).toContain('CONTROL_FEED_ALLOWED_NETWORKS');
      }
      expect((await control.call('GET', '/v1/feeds/inside', { token: tokens.viewer })).status).toBe(404);

      // Allowed (127.0.0.2): read; then the same URL redirects to 127.0.0.1, refused with its bans kept.
      server.answers.set('/hop.netset', { body: '198.51.100.200\n' });
      expect((await add({ name: 'hop', source: `${server.url}/hop.netset` })).status).toBe(201);
      expect(await scheduled('hop')).toMatchObject({ ok: true, added: 1 });
      for (const target of [`${internal.url}/secret`, `http://localhost:${internal.port}/secret`]) {
        server.answers.set('/hop.netset', { redirect: target });
        const res = await sync('hop');
        expect([target, res.status, res.body.code]).toEqual([target, 400, 'FEED_ADDRESS_REFUSED']);
        expect(res.body.detail).toMatch(/loopback address; feeds may reach public addresses only; CONTROL_FEED_ALLOWED_NETWORKS opens others; its 1 bans are kept$/);
        expect(await feed('hop')).toMatchObject({ bans: 1, lastRefresh: { ok: false, code: 'FEED_ADDRESS_REFUSED' } });
      }
      expect(internal.hits).toEqual([]);
      expect((await control.call('DELETE', '/v1/feeds/hop', { token: tokens.operator })).body).toEqual({ removed: 'hop', lifted: 1 });
    } finally {
      await internal.stop();
    }
  }, 60_000);

  it('bans a 100,000-entry netset, refuses hostile refreshes keeping every ban, and lifts them all when removed', async () => {
    server.answers.set('/big.netset', { body: generatedNetset(100_000) });
    expect((await add({ name: 'big', source: `${server.url}/big.netset`, maxEntries: 100_000 })).status).toBe(201);
    expect(await scheduled('big')).toMatchObject({ ok: true, entries: 100_000, added: 100_000 });
    expect((await feed('big')).bans).toBe(100_000);
    await waitUntil(async () => (await denied(generatedAddress(99_998))) && ((await denied(generatedAddress(99_999))) ? true : undefined), 'the last entries at the enforcer', 60_000, 50);
    expect(await denied(generatedAddress(0))).toBe(true);

    const refusals: [string, object, string, RegExp][] = [
      ['empty', { body: '' }, 'FEED_LIFT_REFUSED', /lists no entries/],
      ['truncated', { body: generatedNetset(100_000).slice(0, 200_000) }, 'FEED_LIFT_REFUSED', /would lift \d+ of the feed's 100000 bans/],
      ['binary', { body: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x31, 0x2e]) }, 'FEED_SOURCE_FAILED', /binary/],
      ['an error page', { status: 500 }, 'FEED_SOURCE_FAILED', /answered 500/],
      ['html', { body: '<html>\n<body>\nmaintenance\n</body>\n</html>\n' }, 'FEED_INVALID', /5 of 5 lines/],
      ['huge', { huge: 5 * 1024 * 1024 }, 'FEED_SOURCE_FAILED', /more than 4194304 bytes/],
      ['slow', { slow: true }, 'FEED_SOURCE_FAILED', /CONTROL_FEED_TIMEOUT_MS/],
    ];
    for (const [what, answer, code, detail] of refusals) {
      server.answers.set('/big.netset', answer as never);
      const res = await sync('big');
      expect([what, res.body.code], what).toEqual([what, code]);
      expect(res.body.detail).toMatch(detail);
      expect(res.body.detail).toContain('its 100000 bans are kept');
      expect(await feed('big'), what).toMatchObject({ bans: 100_000, lastRefresh: { ok: false, code } });
    }
    // Too many entries for the cap: the same list under a feed capped at 1,000.
    server.answers.set('/big.netset', { body: generatedNetset(100_000) });
    expect((await add({ name: 'capped', source: `${server.url}/big.netset`, maxEntries: 1_000 })).status).toBe(201);
    expect(await scheduled('capped')).toMatchObject({ ok: false, code: 'FEED_INVALID', error: expect.stringContaining('more than 1000 entries') });
    expect((await feed('capped')).bans).toBe(0);
    expect(await denied(generatedAddress(1))).toBe(true);

    // A list that really shrank goes through with force.
    server.answers.set('/big.netset', { body: generatedNetset(10) });
    expect((await sync('big', { force: true })).body).toMatchObject({ ok: true, entries: 10, lifted: 99_990, forced: true });
    await waitUntil(async () => !(await denied(generatedAddress(99_999))) || undefined, 'the lift at the enforcer', 60_000, 50);
    expect(await denied(generatedAddress(9))).toBe(true);

    expect((await control.call('DELETE', '/v1/feeds/big', { token: tokens.operator })).body).toEqual({ removed: 'big', lifted: 10 });
    await waitUntil(async () => !(await denied(generatedAddress(0))) || undefined, 'the removed feed lifted at the enforcer', 20_000, 20);
    expect((await control.call('GET', '/v1/feeds/big', { token: tokens.viewer })).status).toBe(404);
  }, 300_000);
});
