import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDebianPackage } from '../scripts/stack/index.mjs';
import { testInfra, uniqueName, waitUntil } from './support/infra.js';
import { REPO_ROOT } from './support/processes.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { event, publishEvents } from './support/aggregator.js';
import { startControl, testTokens, type Control } from './support/control.js';

/** `npx banstream` typed into a real terminal (tmux): what a person sees, and the exit codes. */
describe('banstream CLI in a terminal', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  const socket = uniqueName('banstream-cli');
  const dir = mkdtempSync(join(tmpdir(), 'banstream-cli-'));
  let broker: TestBroker;
  let control: Control;

  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', 'cli');
  /** Types a command line, waits for its `exit=N` line, returns what the screen shows from the prompt on. */
  async function type(line: string): Promise<string> {
    tmux('send-keys', '-t', 'cli', 'clear', 'Enter');
    await waitUntil(() => !screen().includes('exit='), 'a clear screen', 5_000, 50);
    tmux('send-keys', '-t', 'cli', `${line}; echo "exit=$?"`, 'Enter');
    return waitUntil(
      () => {
        const text = screen();
        return /^exit=\d+$/m.test(text) ? text : undefined;
      },
      `"${line}" to finish`,
      30_000,
      100,
    );
  }

  beforeAll(async () => {
    ensureDebianPackage('tmux', 'tmux', (line) => console.log(`[tmux] ${line}`));
    broker = await connectTestBroker(kafkaBrokers);
    control = await startControl({ ...broker.env, CONTROL_TOKENS: tokens.entries });
    const policy = { id: 'login-rate', key: ['ip'], threshold: { count: 20, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } };
    expect((await control.call('POST', '/v1/policies', { token: tokens.admin, body: policy })).status).toBe(201);
    for (const [subject, reason] of [
      ['203.0.113.7', 'credential stuffing'],
      ['user:42', 'card testing'],
    ]) {
      expect((await control.call('POST', '/v1/bans', { token: tokens.operator, body: { subject, duration: '2h', reason } })).status).toBe(201);
    }
    // Some retained traffic for the backtest: one client over the threshold.
    const now = Date.now();
    await publishEvents(
      broker.producer,
      broker.topics.name('events'),
      Array.from({ length: 300 }, (_, i) => event(i < 100 ? '203.0.113.50' : `198.51.100.${i % 50}`, now - 1000 + i)),
      20,
    );
    writeFileSync(join(dir, 'token'), tokens.operator, { mode: 0o600 });
    writeFileSync(
      join(dir, 'policies.yaml'),
      [
        'policies:',
        '  - id: login-rate',
        '    key: [ip]',
        '    threshold: { count: 30, interval: 1m }',
        '    action: { type: ban, banDuration: 10m }',
        '  - id: api-rate',
        '    key: [apikey]',
        '    threshold: { count: 100, interval: 1m }',
        '    action: { type: throttle }',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'broken.yaml'), 'id: broken\nkey: [ip]\nthreshold: { count: 0, interval: 1m }\naction: { type: throttle }\n');
    tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'cli', '-x', '200', '-y', '60', 'bash --norc --noprofile');
    tmux('send-keys', '-t', 'cli', `export PS1='$ ' BANSTREAM_URL=${control.url} BANSTREAM_TOKEN_FILE=${join(dir, 'token')} NO_UPDATE_NOTIFIER=1; cd ${REPO_ROOT}`, 'Enter');
  }, 120_000);

  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    await control?.stop();
    await broker?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('`npx banstream bans list` shows the bans as a table', async () => {
    const text = await type('npx banstream bans list');
    expect(text).toMatch(/^SUBJECT\s+POLICY\s+ORIGIN\s+STATUS\s+SINCE\s+EXPIRES\s+REASON$/m);
    expect(text).toMatch(/^ip:203\.0\.113\.7\s+manual\s+manual \(operator-user\)\s+403\s+\S+Z\s+in 2h\s+credential stuffing$/m);
    expect(text).toMatch(/^user:42\s+manual\s+manual \(operator-user\)\s+403\s+\S+Z\s+in 2h\s+card testing$/m);
    expect(text).toContain('2 of 2 ban(s)');
    expect(text).toMatch(/^exit=0$/m);
  });

  it('`npx banstream policies apply --dry-run` shows the diff and changes nothing', async () => {
    const text = await type(`npx banstream policies apply --dry-run -f ${join(dir, 'policies.yaml')}`);
    expect(text).toContain('+ api-rate  (new, version 1)');
    expect(text).toContain('    key: ["apikey"]');
    expect(text).toContain('~ login-rate  (version 1 → 2)');
    expect(text).toContain('    threshold.count: 20 → 30');
    expect(text).toContain('Plan: 1 to create, 1 to update, 0 to delete, 0 unchanged. Dry run: nothing was changed.');
    expect(text).toMatch(/^exit=0$/m);
    expect((await control.call('GET', '/v1/policies/login-rate', { token: tokens.viewer })).body.version).toBe(1);
    expect((await control.call('GET', '/v1/policies/api-rate', { token: tokens.viewer })).status).toBe(404);
  });

  it('names the invalid field and its line, with exit code 3; an operator may not apply (exit 5)', async () => {
    const invalid = await type(`npx banstream policies apply --dry-run -f ${join(dir, 'broken.yaml')}`);
    expect(invalid).toMatch(/threshold\.count: must be > 0 \(line 3, column \d+\)/);
    expect(invalid).toMatch(/^exit=3$/m);
    const forbidden = await type(`npx banstream policies apply -f ${join(dir, 'policies.yaml')}`);
    expect(forbidden).toContain('operator-user has the role operator; POST /v1/policies/apply needs admin');
    expect(forbidden).toMatch(/^exit=5$/m);
  }, 180_000);

  it('`npx banstream backtest` draws a progress bar, then the report', async () => {
    const text = await type('npx banstream backtest --policy login-rate --from 10m');
    expect(text).toMatch(/^\[#{30}\] 100%  \d+\/\d+ records$/m);
    expect(text).toContain('Candidate: login-rate (ban, preview)');
    expect(text).toMatch(/^\s+ip:203\.0\.113\.50\s+\S+Z\s+\S+Z\s+21\s+0\s+79$/m);
    expect(text).toMatch(/^exit=0$/m);
  });

  it('`npx banstream bans add 0.0.0.0/0` prints the refusal and the hint to use --force (exit 3); --force places it', async () => {
    const refused = await type('npx banstream bans add 0.0.0.0/0 --duration 1h --reason typo');
    expect(refused).toContain('banstream: POST /v1/bans: 400 NETWORK_TOO_WIDE');
    expect(refused).toContain('  subject: 0.0.0.0/0 is wider than the /8 an IPv4 ban may cover without force (CONTROL_MIN_PREFIX_V4)');
    expect(refused).toContain('  hint: if you mean a network this wide, run the command again with --force (the audit records it as forced)');
    expect(refused).toMatch(/^exit=3$/m);
    expect((await control.call('GET', `/v1/bans/${encodeURIComponent('cidr:0.0.0.0/0')}`, { token: tokens.viewer })).status).toBe(404);
    const forced = await type('npx banstream bans add 0.0.0.0/0 --duration 1m --reason drill --force');
    expect(forced).toMatch(/^banned cidr:0\.0\.0\.0\/0 until \S+Z \(in (1m|60s)\): drill$/m);
    expect(forced).toMatch(/^exit=0$/m);
  });
});
