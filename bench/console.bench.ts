/**
 * npm run bench -- console
 *
 * The web console in Debian's chromium (playwright-core, headless), against the built
 * control service holding 1,000,000 bans read from the bans topic:
 * - console_js_gzip_kb: every script the console's pages load, gzip -9 (target at most 150 KB;
 *   no ceiling but the target);
 * - bans_usable_ms: navigation start to a usable Bans page, i.e. the first page of rows
 *   rendered and the subject search enabled (target at most 1,000 ms); ceiling: a bare GET
 *   of the same first page of bans, with a token, in the same run;
 * - overview_delay_p50_ms: a ban published to the bans topic to the Overview's bans per
 *   minute changing in the page (target at most 2 s); ceiling: the Overview's push period
 *   (CONTROL_CONSOLE_TICK_MS).
 * Needs Kafka up (npm run stack:up, or KAFKA_BROKERS) and `npm run build` done (the
 * console's bundle is built with the rest). BENCH_CONSOLE_BANS changes the million.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ensureTopics, parseBrokers, topicFullName, topicSpecs } from '@banstream/kafka';
import { loadSchemaCatalog, SCHEMA_NAMES } from '@banstream/schemas';
import { note, report } from './lib.js';
import { benchKafka } from './aggregator/kafka.js';
import { freePort } from './aggregator/service.js';
import { benchBan, produceBans } from './console/bans.js';
import { measureOverviewDelay, measureScripts, measureUsableBans, signIn } from './console/pages.js';
import { CHROMIUM, launchBrowser } from '../test/support/browser.js';
import { exitWithin, spawnService, type RunningProcess } from '../test/support/processes.js';

const BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:19092';
const BANS = Number(process.env.BENCH_CONSOLE_BANS ?? 1_000_000);
const PARTITIONS = 3;
const LOADS = 7;
const OVERVIEW_SAMPLES = 10;
const TICK_MS = 1_000;

async function startControl(env: Record<string, string>): Promise<{ proc: RunningProcess; url: string; readyMs: number }> {
  const port = await freePort();
  const started = performance.now();
  const proc = spawnService('control', { ...env, HTTP_PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  // Ready means every topic read to its end: the million bans are held.
  for (;;) {
    if (
      (await fetch(`${url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      break;
    if (proc.child.exitCode !== null) throw new Error(`control exited with ${proc.child.exitCode}:\n${proc.output().slice(-3_000)}`);
    if (performance.now() - started > 240_000) throw new Error(`control not ready 240 s after its start:\n${proc.output().slice(-3_000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { proc, url, readyMs: performance.now() - started };
}

async function main(): Promise<void> {
  const prefix = `bench-console-${Date.now()}-${process.pid}.`;
  const kafka = benchKafka(parseBrokers(BROKERS), `bench-console-${process.pid}`);
  const admin = kafka.admin();
  await admin.connect();
  const token = `bst_${randomBytes(24).toString('base64url')}`;
  let control: Awaited<ReturnType<typeof startControl>> | undefined;
  const browser = await launchBrowser();
  try {
    await ensureTopics(admin, topicSpecs({ prefix, partitions: PARTITIONS, replicationFactor: 1 }));
    note(`producing ${BANS} bans`);
    const produced = await produceBans(kafka, topicFullName(prefix, 'bans'), BANS);
    note(`produced in ${Math.round(produced.ms)} ms (${produced.bytes} bytes); starting control`);
    control = await startControl({
      KAFKA_BROKERS: BROKERS,
      TOPIC_PREFIX: prefix,
      TOPIC_PARTITIONS: String(PARTITIONS),
      LOG_LEVEL: 'warn',
      CONTROL_TOKENS: `bench:admin:${createHash('sha256').update(token).digest('hex')}`,
      CONTROL_RATE_LIMIT: '1000000',
      CONTROL_CONSOLE_TICK_MS: String(TICK_MS),
    });
    const held = (await (await fetch(`${control.url}/v1/bans?limit=1`, { headers: { authorization: `Bearer ${token}` } })).json()) as { total: number };
    if (held.total !== BANS) throw new Error(`control holds ${held.total} bans, not ${BANS}`);
    note(`control ready with ${held.total} bans in ${Math.round(control.readyMs)} ms`);

    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await signIn(page, control.url, token);
    const scripts = await measureScripts(page, control.url);
    const usable = await measureUsableBans(page, control.url, token, LOADS);

    const codec = loadSchemaCatalog().codec(SCHEMA_NAMES.ban);
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const emit = async (n: number) => {
      const ban = { ...benchBan(BANS + n, Date.now()), startedAt: Date.now() };
      await producer.send({ topic: topicFullName(prefix, 'bans'), acks: 1, messages: [{ key: ban.subject, value: codec.encode(ban) }] });
    };
    const overview = await measureOverviewDelay(page, control.url, emit, OVERVIEW_SAMPLES, TICK_MS).finally(() => producer.disconnect());

    report(
      'console',
      {
        kafka: BROKERS,
        browser: `${CHROMIUM} ${browser.version()} headless, playwright-core`,
        bans: `${BANS} on the bans topic (${PARTITIONS} partitions), 80% addresses, 10% /24 networks, 10% users, started an hour ago`,
        produce_ms: Math.round(produced.ms),
        control_ready_ms: Math.round(control.readyMs),
        js: 'every script the pages load (each page visited), fetched again and compressed with gzip -9; target at most 150 KB',
        usable: `navigation start to the first animation frame with a ban row rendered and the subject search enabled, ${LOADS} loads of /console/#/bans (median of all but the first, which fetches the scripts); ceiling: the page's own GET /v1/bans request replayed with fetch and a token, median of ${LOADS}`,
        overview: `a ban published to the bans topic (acks 1) to the Overview's bans per minute changing in the page, ${OVERVIEW_SAMPLES} bans at varying phases of the push period; ceiling: the push period CONTROL_CONSOLE_TICK_MS`,
      },
      { ...scripts, ...usable, ...overview, ceiling_overview_tick_ms: TICK_MS, overview_delay_ratio_to_tick: Math.round((overview.overview_delay_p50_ms / TICK_MS) * 100) / 100 },
    );
  } finally {
    await browser.close().catch(() => undefined);
    if (control) {
      control.proc.child.kill('SIGTERM');
      await exitWithin(control.proc, 15_000).catch(() => control?.proc.child.kill('SIGKILL'));
    }
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.disconnect();
  }
}

await main();
