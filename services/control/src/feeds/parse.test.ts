import { describe, expect, it } from 'vitest';
import { FeedParseError, parseFeed } from './parse.js';

const limits = { maxLines: 1_000, maxEntries: 100 };
const subjects = (text: string, format: Parameters<typeof parseFeed>[1] = { kind: 'netset' }) => parseFeed(text, format, limits).entries.map((e) => e.subject);

describe('parseFeed: netsets', () => {
  it('reads a FireHOL netset: comments, addresses and networks, canonical and deduplicated', () => {
    const text = ['#', '# firehol_level1', '# Maintainer: FireHOL', '', '0.0.0.0/8', '1.10.16.0/20', '5.188.10.7', '5.188.10.7/32', '10.1.2.3/8', '2001:DB8::/32', '  203.0.113.9  '].join('\n');
    const parsed = parseFeed(text, { kind: 'netset' }, limits);
    expect(parsed.entries.map((e) => e.subject)).toEqual(['cidr:0.0.0.0/8', 'cidr:1.10.16.0/20', 'ip:5.188.10.7', 'cidr:10.0.0.0/8', 'cidr:2001:db8::/32', 'ip:203.0.113.9']);
    expect(parsed).toMatchObject({ dataLines: 7, invalid: 0, duplicates: 1 });
  });

  it('reads Spamhaus DROP lines, the SBL reference after ; being a comment, with CRLF ends', () => {
    const text = '; Spamhaus DROP List 2024/01/01\r\n; Expires: Tue, 02 Jan 2024\r\n1.10.16.0/20 ; SBL256894\r\n1.19.0.0/16 ; SBL434604\r\n';
    expect(subjects(text)).toEqual(['cidr:1.10.16.0/20', 'cidr:1.19.0.0/16']);
  });

  it('counts lines that are not an address or network, naming their numbers only', () => {
    const parsed = parseFeed('1.2.3.4\n<html>\n999.1.1.1\n1.2.3.0/33\n5.6.7.8', { kind: 'netset' }, limits);
    expect(parsed).toMatchObject({ dataLines: 5, invalid: 3, invalidAt: [2, 3, 4] });
    expect(parsed.entries.map((e) => e.subject)).toEqual(['ip:1.2.3.4', 'ip:5.6.7.8']);
  });

  it('refuses a text past its line or entry limit rather than reading it on', () => {
    const many = Array.from({ length: 101 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join('\n');
    expect(() => parseFeed(many, { kind: 'netset' }, limits)).toThrow(FeedParseError);
    expect(() => parseFeed(many, { kind: 'netset' }, limits)).toThrow('more than 100 entries');
    expect(() => parseFeed('#\n'.repeat(1_001), { kind: 'netset' }, limits)).toThrow('more than 1000 lines');
  });
});

describe('parseFeed: CSV', () => {
  const vendor = [
    '# vendor threat intel export',
    'first_seen,ip_address,confidence,"note, quoted"',
    '2024-01-01,198.51.100.7,90,"scanner, ssh"',
    '2024-01-02,198.51.100.0/24,75,"botnet ""c2"""',
    '2024-01-03,,10,empty',
  ].join('\n');

  it('takes a column by header name, a malformed or empty cell counting as invalid', () => {
    const parsed = parseFeed(vendor, { kind: 'csv', column: 'IP_Address', header: true }, limits);
    expect(parsed.entries.map((e) => e.subject)).toEqual(['ip:198.51.100.7', 'cidr:198.51.100.0/24']);
    expect(parsed).toMatchObject({ dataLines: 3, invalid: 1, invalidAt: [5] });
  });

  it('takes a column by 1-based index without a header row', () => {
    expect(subjects('203.0.113.1,x\n203.0.113.2,y', { kind: 'csv', column: '1', header: false })).toEqual(['ip:203.0.113.1', 'ip:203.0.113.2']);
  });

  it('refuses a header without the named column', () => {
    expect(() => parseFeed(vendor, { kind: 'csv', column: 'address', header: true }, limits)).toThrow('no column "address" in the header row');
  });
});
