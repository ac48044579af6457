import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parse } from 'yaml';
import { histogram } from './format.js';
import { toYaml } from './to-yaml.js';

describe('toYaml', () => {
  it('writes a policy as its author would', () => {
    expect(toYaml({ id: 'login-rate', key: ['ip'], threshold: { count: 20, interval: '1m' }, match: { paths: ['/login'] }, mode: 'preview', enabled: true })).toBe(
      ['id: login-rate', 'key:', '  - ip', 'threshold:', '  count: 20', '  interval: "1m"', 'match:', '  paths:', '    - /login', 'mode: preview', 'enabled: true', ''].join('\n'),
    );
  });

  it('gives back the same value through a real YAML parser, for any JSON value', () => {
    // The editor shows stored policies through toYaml and the server parses the text with the yaml package: they must agree.
    const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
    fc.assert(
      fc.property(json, (value) => {
        expect(parse(toYaml(value))).toEqual(value);
      }),
      { numRuns: 400 },
    );
  }, 60_000);

  it('quotes strings YAML would read as something else', () => {
    for (const s of ['true', 'no', 'null', '~', '1m', '0x10', '- a', 'a: b', 'a #b', '', ' x', '*x', '&x', '!x', '{a}', '[a]', "'", '"', '\n', 'é']) {
      expect(parse(toYaml({ s })), JSON.stringify(s)).toEqual({ s });
    }
  });
});

describe('histogram', () => {
  it('puts each time in its bucket and leaves out times outside the range', () => {
    expect(histogram([0, 5, 9, 10, 19, 20, -1], 0, 20, 2)).toEqual([
      { at: 0, count: 3 },
      { at: 10, count: 2 },
    ]);
  });
});
