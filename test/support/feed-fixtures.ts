import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Blocklists in the formats real sources publish, served over HTTP by the test, and
 * the hostile answers a source can give. Addresses are from the documentation
 * ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32) plus the
 * generated list's own 100.64.0.0/10, so nothing real is banned.
 */

/** Like FireHOL's firehol_level1.netset: a comment header, bogons (one of them a /3, wider than the guard rails), networks and addresses. */
export function fireholLevel1(extra: string[] = []): string {
  return [
    '#',
    '# firehol_level1',
    '# ipv4 hash:net ipset',
    '#',
    '# A firewall blacklist composed from IP lists, providing',
    '# maximum protection with minimum false positives.',
    '#',
    '# Source URL: https://iplists.firehol.org/?ipset=firehol_level1',
    '# Maintainer      : FireHOL',
    '#',
    '0.0.0.0/8',
    '224.0.0.0/3',
    '192.0.2.0/25',
    '198.51.100.0/24',
    '203.0.113.7',
    '203.0.113.8',
    '203.0.113.64/26',
    ...extra,
  ].join('\n');
}

/** Like Spamhaus DROP (drop.txt): `;` comments, each network followed by its SBL reference. */
export function spamhausDrop(): string {
  return [
    '; Spamhaus DROP List 2024/05/01 - (c) 2024 The Spamhaus Project SLU',
    '; https://www.spamhaus.org/drop/drop.txt',
    '; Last-Modified: Wed, 01 May 2024 10:10:10 GMT',
    '; Expires: Wed, 01 May 2024 12:00:00 GMT',
    '192.0.2.128/26 ; SBL256894',
    '198.51.100.128/25 ; SBL434604',
    '2001:db8:dead::/48 ; SBL599999',
    '',
  ].join('\r\n');
}

/** A vendor's CSV export: a comment, a header, quoted cells with commas in them. */
export function vendorCsv(): string {
  return [
    '# Acme Threat Intel export, generated 2024-05-01T00:00:00Z',
    'first_seen,indicator,type,confidence,"description"',
    '2024-04-30T10:00:00Z,203.0.113.200,ipv4,90,"ssh brute force, 40 hosts"',
    '2024-04-30T11:00:00Z,203.0.113.201,ipv4,85,"credential stuffing"',
    '2024-04-30T12:00:00Z,2001:db8:beef::1,ipv6,70,"scanner ""masscan"""',
  ].join('\n');
}

/** `count` (up to 262,144) entries of 100.64.0.0/10 as a large netset mixes them: mostly addresses, every tenth a /28 to /30 network. */
export function generatedNetset(count: number): string {
  const lines = ['# generated netset', `# entries: ${count}`];
  for (let i = 0; i < count; i++) {
    // 16 addresses apart: the networks never overlap.
    lines.push(i % 10 === 9 ? `${generatedAddress(i)}/${28 + (i % 3)}` : generatedAddress(i));
  }
  return `${lines.join('\n')}\n`;
}

/** The address of the generated netset's entry `i` (the network's first address for every tenth). */
export function generatedAddress(i: number): string {
  const n = 0x64400000 + i * 16;
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

export type Answer = { body: string | Buffer } | { status: number } | { slow: true } | { huge: number } | { redirect: string };

/**
 * A local HTTP server answering each path as the test sets it. On 127.0.0.2 by default: the
 * control service under test allows that address (CONTROL_FEED_ALLOWED_NETWORKS) and keeps
 * refusing 127.0.0.1, where a server stands for what feeds must not reach.
 */
export class FeedServer {
  readonly answers = new Map<string, Answer>();
  /** The paths requested, in order. */
  readonly hits: string[] = [];
  private server: Server | undefined;
  private readonly hanging = new Set<import('node:http').ServerResponse>();
  url = '';
  port = 0;

  constructor(private readonly host = '127.0.0.2') {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.hits.push(req.url ?? '');
      const answer = this.answers.get(req.url ?? '');
      if (answer === undefined) return void res.writeHead(404).end('not found');
      if ('redirect' in answer) return void res.writeHead(302, { location: answer.redirect }).end();
      if ('status' in answer) return void res.writeHead(answer.status).end('<html>oops</html>');
      if ('slow' in answer) {
        // One line, then nothing: a source that never finishes.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('192.0.2.1\n');
        this.hanging.add(res);
        return;
      }
      if ('huge' in answer) {
        // No content-length: the reader must count bytes as they come.
        res.writeHead(200, { 'content-type': 'text/plain' });
        const line = '192.0.2.1\n'.repeat(10_000);
        let sent = 0;
        const more = () => {
          while (sent < answer.huge) {
            sent += line.length;
            if (!res.write(line)) return void res.once('drain', more);
          }
          res.end();
        };
        res.on('error', () => undefined);
        more();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end(answer.body);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, this.host, resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://${this.host}:${this.port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
