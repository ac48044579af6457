import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDebianPackage } from '../scripts/stack/index.mjs';
import { testInfra, uniqueName, waitUntil } from './support/infra.js';
import { exitWithin, REPO_ROOT } from './support/processes.js';
import { connectTestBroker, type TestBroker } from './support/broker.js';
import { startAggregator, type Aggregator } from './support/aggregator.js';
import { startControl, testTokens, type Control } from './support/control.js';

const ROWS = 40;

/** `npm run demo` in a real terminal (tmux) against running services: the live screen a person watches. */
describe('npm run demo in a terminal', () => {
  const { kafkaBrokers } = testInfra();
  const tokens = testTokens();
  const socket = uniqueName('banstream-demo');
  const dir = mkdtempSync(join(tmpdir(), 'banstream-demo-'));
  let broker: TestBroker;
  let control: Control;
  let aggregator: Aggregator | undefined;

  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const visible = () => tmux('capture-pane', '-p', '-t', 'demo');
  const everything = () => tmux('capture-pane', '-p', '-S', '-5000', '-t', 'demo');

  beforeAll(async () => {
    ensureDebianPackage('tmux', 'tmux', (line) => console.log(`[tmux] ${line}`));
    broker = await connectTestBroker(kafkaBrokers, 6);
    control = await startControl({ ...broker.env, CONTROL_TOKENS: tokens.entries });
    aggregator = await startAggregator({ ...broker.env, AGGREGATOR_GROUP_ID: `${broker.topics.prefix}aggregator` });
    writeFileSync(join(dir, 'token'), tokens.admin, { mode: 0o600 });
    const env = {
      KAFKA_BROKERS: kafkaBrokers,
      TOPIC_PREFIX: broker.topics.prefix,
      BANSTREAM_URL: control.url,
      BANSTREAM_TOKEN_FILE: join(dir, 'token'),
      BANSTREAM_AGGREGATOR_URL: `http://127.0.0.1:${aggregator.port}`,
      BANSTREAM_STACK_DIR: dir,
      DEMO_LOG: join(dir, 'demo.log'),
      NO_UPDATE_NOTIFIER: '1',
    };
    tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'demo', '-x', '140', '-y', String(ROWS), 'bash --norc --noprofile');
    const exports = Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    tmux('send-keys', '-t', 'demo', `export PS1='$ ' ${exports}; cd ${REPO_ROOT}; npm run demo; echo "exit=$?"`, 'Enter');
  }, 120_000);

  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    if (aggregator) {
      aggregator.proc.child.kill('SIGTERM');
      await exitWithin(aggregator.proc, 15_000).catch(() => aggregator!.proc.child.kill('SIGKILL'));
    }
    await control?.stop();
    await broker?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the flood IP and the botnet /24 banned, each with its delay after the attack start', async () => {
    const banned = (text: string, subject: string) =>
      new RegExp(`^\\s+${subject.replace(/[.]/g, '\\.')}\\s+\\S+\\s+age \\S+\\s+lifts \\S+\\s+banned (\\d+) ms after attack start \\(crossing \\+(-?\\d+) ms\\)$`, 'm').exec(text);
    const screen = await waitUntil(
      () => {
        const text = visible();
        return banned(text, 'ip:203.0.113.66') && banned(text, 'cidr:198.51.100.0/24') ? text : undefined;
      },
      'both bans on the screen',
      240_000,
      250,
    );
    const flood = Number(banned(screen, 'ip:203.0.113.66')![1]);
    const botnet = Number(banned(screen, 'cidr:198.51.100.0/24')![1]);
    const crossing = (subject: string) => Number(banned(screen, subject)![2]);
    console.log(
      `the demo's screen:\n${screen}\nflood banned at every edge ${flood} ms after its start (${crossing('ip:203.0.113.66')} ms after its crossing request), botnet ${botnet} ms (${crossing('cidr:198.51.100.0/24')} ms)`,
    );
    expect(flood).toBeGreaterThan(0);
    expect(botnet).toBeGreaterThan(0);
    expect(screen).toMatch(/^single-IP flood\s+\d+\.\d\s+\d+\.\d$/m);
    expect(screen).toMatch(/^legitimate requests refused: 0 /m);
  }, 300_000);

  it('redraws in place: the screen changes, never scrolls, and fits the pane', async () => {
    const first = visible();
    await waitUntil(() => visible() !== first, 'a redraw', 5_000, 100);
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 400));
      const all = everything();
      // One frame in the whole scrollback: redraws overwrite it instead of appending.
      expect(all.split('\n').filter((l) => l.startsWith('TRAFFIC (req/s)')).length).toBe(1);
      expect(visible().trimEnd().split('\n').length).toBeLessThanOrEqual(ROWS);
    }
  }, 30_000);

  it('stops cleanly on Ctrl-C: says what it sent, gives the prompt back, leaves no process', async () => {
    tmux('send-keys', '-t', 'demo', 'C-c');
    // bash drops the rest of a command line interrupted by Ctrl-C, so the prompt coming back is the sign.
    const exited = (text: string) => {
      const lines = text.trimEnd().split('\n');
      return lines.at(-1) === '$' && lines.some((l) => /^sent legit \d+, flood \d+, botnet \d+, spike \d+$/.test(l));
    };
    const text = await waitUntil(() => (exited(visible()) ? visible() : undefined), 'the demo to exit', 30_000, 100).catch((error: Error) => {
      throw new Error(`${error.message}; the screen:\n${visible()}`);
    });
    expect(text).toContain('stopping ...');
    const demoProcesses = () =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('demo/main.ts'));
    await waitUntil(() => demoProcesses().length === 0, 'no demo process left', 25_000, 200).catch((error: Error) => {
      throw new Error(`${error.message}: ${demoProcesses().join('; ')}\n${readFileSync(join(dir, 'demo.log'), 'utf8').split('\n').slice(-15).join('\n')}`);
    });
  }, 180_000);
});
