import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedAddressError, parseAllowedNetworks, PUBLIC_ONLY, type FeedAddressPolicy, type Resolver } from './address-guard.js';
import { checkSourceAddress, FeedSourceError, readSource, type SourceLimits } from './source.js';

/** A real HTTP server on one loopback address, counting the requests it gets. */
class Site {
  readonly hits: string[] = [];
  /** TCP connections accepted, requests or not (a TLS handshake that fails sends none). */
  connections = 0;
  readonly routes = new Map<string, (res: import('node:http').ServerResponse) => void>();
  private server: Server | undefined;
  url = '';
  port = 0;

  constructor(private readonly host: string) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.hits.push(req.url ?? '');
      const route = this.routes.get(req.url ?? '');
      if (route) route(res);
      else res.writeHead(404).end();
    });
    this.server.on('connection', () => this.connections++);
    await new Promise<void>((resolve) => this.server!.listen(0, this.host, resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://${this.host}:${this.port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const limits = (addresses: FeedAddressPolicy, resolver?: Resolver): SourceLimits => ({
  timeoutMs: 3_000,
  maxBytes: 64 * 1024,
  fileDir: undefined,
  addresses,
  ...(resolver ? { resolver } : {}),
});
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error,
  );

describe('reading a feed over http(s), by address', () => {
  // 127.0.0.2 stands for an allowed internal host, 127.0.0.1 for what must stay unreachable.
  const internal = new Site('127.0.0.1');
  const allowed = new Site('127.0.0.2');
  const ALLOW_2 = { allowed: parseAllowedNetworks('127.0.0.2/32') };

  beforeAll(async () => {
    await internal.start();
    await allowed.start();
    internal.routes.set('/list', (res) => res.writeHead(200).end('192.0.2.1\n'));
    allowed.routes.set('/list', (res) => res.writeHead(200).end('198.51.100.7\n'));
    allowed.routes.set('/gz', (res) => res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('203.0.113.9\n')));
    allowed.routes.set('/bomb', (res) => res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(1024 * 1024, 0x31))));
    allowed.routes.set('/to-internal', (res) => res.writeHead(302, { location: `${internal.url}/list` }).end());
    allowed.routes.set('/to-localhost', (res) => res.writeHead(301, { location: `http://localhost:${internal.port}/list` }).end());
    allowed.routes.set('/to-mapped', (res) => res.writeHead(307, { location: `http://[::ffff:127.0.0.1]:${internal.port}/list` }).end());
    allowed.routes.set('/to-file', (res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end());
    allowed.routes.set('/relative', (res) => res.writeHead(308, { location: '/list' }).end());
    allowed.routes.set('/loop', (res) => res.writeHead(302, { location: '/loop' }).end());
  });
  afterAll(async () => {
    await internal.stop();
    await allowed.stop();
  });

  it('refuses a loopback source by default without connecting, and reads it when its network is allowed', async () => {
    const before = internal.hits.length;
    const refused = await failure(readSource(`${internal.url}/list`, limits(PUBLIC_ONLY)));
    expect(refused).toBeInstanceOf(FeedAddressError);
    expect(refused?.message).toBe(`127.0.0.1:${internal.port} refused: 127.0.0.1 is a loopback address; feeds may reach public addresses only; CONTROL_FEED_ALLOWED_NETWORKS opens others`);
    expect(internal.hits.length).toBe(before);
    await expect(readSource(`${internal.url}/list`, limits({ allowed: parseAllowedNetworks('127.0.0.0/8') }))).resolves.toBe('192.0.2.1\n');
    await expect(readSource(`${allowed.url}/list`, limits(ALLOW_2))).resolves.toBe('198.51.100.7\n');
  });

  it('refuses `localhost` (the system resolver) at creation and at connect', async () => {
    const source = `http://localhost:${internal.port}/list`;
    const before = internal.hits.length;
    expect(await failure(checkSourceAddress(source, limits(PUBLIC_ONLY)))).toBeInstanceOf(FeedAddressError);
    const refused = await failure(readSource(source, limits(PUBLIC_ONLY)));
    expect(refused).toBeInstanceOf(FeedAddressError);
    expect(refused?.message).toMatch(/^localhost refused: it resolves to a loopback address/);
    expect(internal.hits.length).toBe(before);
  });

  it('checks the addresses it connects to: a name that turns internal after the check is refused (DNS rebinding)', async () => {
    let calls = 0;
    const rebinding: Resolver = async () => (++calls === 1 ? ['93.184.215.14'] : ['127.0.0.1']);
    const source = `http://feeds.example:${internal.port}/list`;
    await expect(checkSourceAddress(source, limits(PUBLIC_ONLY, rebinding))).resolves.toBeUndefined();
    const before = internal.hits.length;
    const refused = await failure(readSource(source, limits(PUBLIC_ONLY, rebinding)));
    expect(refused).toBeInstanceOf(FeedAddressError);
    expect(refused?.message).toMatch(/^feeds.example refused: it resolves to a loopback address/);
    expect(internal.hits.length).toBe(before);
    // The same name, its network allowed: the hook hands the connection the checked address.
    await expect(
      readSource(
        source,
        limits({ allowed: parseAllowedNetworks('127.0.0.1') }, async () => ['127.0.0.1']),
      ),
    ).resolves.toBe('192.0.2.1\n');
  });

  it('guards https connections the same way (the hook is handed to tls.connect)', async () => {
    const before = internal.connections;
    for (const source of [`https://localhost:${internal.port}/list`, `https://127.0.0.1:${internal.port}/list`]) {
      expect(await failure(readSource(source, limits(PUBLIC_ONLY))), source).toBeInstanceOf(FeedAddressError);
    }
    expect(
      await failure(
        readSource(
          `https://feeds.example:${internal.port}/list`,
          limits(PUBLIC_ONLY, async () => ['::1', '127.0.0.1']),
        ),
      ),
    ).toBeInstanceOf(FeedAddressError);
    expect(internal.connections).toBe(before);
    // Allowed, it does connect (and fails the handshake: the server speaks plain HTTP).
    const tls = await failure(
      readSource(
        `https://feeds.example:${internal.port}/list`,
        limits({ allowed: parseAllowedNetworks('127.0.0.1') }, async () => ['127.0.0.1']),
      ),
    );
    expect(tls).toBeInstanceOf(FeedSourceError);
    expect(internal.connections).toBe(before + 1);
  });

  it('checks every redirect hop as the source itself', async () => {
    const before = internal.hits.length;
    for (const path of ['/to-internal', '/to-localhost', '/to-mapped']) {
      const refused = await failure(readSource(`${allowed.url}${path}`, limits(ALLOW_2)));
      expect(refused, path).toBeInstanceOf(FeedAddressError);
      expect(refused?.message, path).toMatch(/loopback address; feeds may reach public addresses only/);
    }
    expect(internal.hits.length).toBe(before);
    const file = await failure(readSource(`${allowed.url}/to-file`, limits(ALLOW_2)));
    expect(file).toBeInstanceOf(FeedSourceError);
    expect(file?.message).toBe(`${allowed.url}/to-file redirected to a file: URL: only http(s) redirects are followed`);
    await expect(readSource(`${allowed.url}/relative`, limits(ALLOW_2))).resolves.toBe('198.51.100.7\n');
    const loop = await failure(readSource(`${allowed.url}/loop`, limits(ALLOW_2)));
    expect(loop?.message).toBe(`${allowed.url}/loop redirected more than 5 times`);
    expect(allowed.hits.filter((h) => h === '/loop')).toHaveLength(6);
  });

  it('decodes a compressed answer and bounds its decoded size', async () => {
    await expect(readSource(`${allowed.url}/gz`, limits(ALLOW_2))).resolves.toBe('203.0.113.9\n');
    expect((await failure(readSource(`${allowed.url}/bomb`, limits(ALLOW_2))))?.message).toBe(`${allowed.url}/bomb sent more than 65536 bytes (CONTROL_FEED_MAX_BYTES)`);
  });

  it('answers a status as before, and refuses a literal internal address at creation', async () => {
    expect((await failure(readSource(`${allowed.url}/nothing`, limits(ALLOW_2))))?.message).toBe(`${allowed.url}/nothing answered 404`);
    expect(await failure(checkSourceAddress('http://169.254.169.254/latest/meta-data/', limits(PUBLIC_ONLY)))).toBeInstanceOf(FeedAddressError);
    // A name that does not resolve is left to the reads: they check again.
    await expect(checkSourceAddress('https://feeds.invalid/list', limits(PUBLIC_ONLY))).resolves.toBeUndefined();
  });
});
