import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { Probe } from './probe.js';
import { formatReport } from './report.js';
import { runFuzz } from './runner.js';
import { checkInput, inputAt } from './session.js';
import { buildSut } from './sut.js';
import { failuresIn, type Tally } from './tally.js';

/**
 * npm run fuzz -- [--seconds 60] [--seed N] [--workers N] [--replay worker.chunk.index]
 *
 * The differential fuzz harness (schemas/README.md, "Accepted bytes"): every reader
 * of banstream's Kafka records against a reference decoder, on generated and mutated
 * records, in worker threads under a watchdog. Prints a table per reader and
 * boundary and a final JSON line; exits 1 on any crash, slow decode, disagreement or
 * lost event. --replay runs one input again, here, and prints what each reader said.
 */
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    seed: { type: 'string' },
    workers: { type: 'string', default: String(availableParallelism()) },
    replay: { type: 'string' },
    'limit-ms': { type: 'string', default: '10' },
  },
});
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const number = (name: string, text: string) => {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${text}`);
  return n;
};

if (values.replay !== undefined) {
  const sut = buildSut();
  const input = await inputAt(sut, seed, values.replay);
  const tally: Tally = {};
  const probe = new Probe(tally, BigInt(number('limit-ms', values['limit-ms']) * 1e6));
  await checkInput(sut, input, probe);
  await probe.settle();
  process.stdout.write(`${input.target}, mutations ${input.mutations}\nhex ${input.bytes.toString('hex')}\n`);
  for (const f of probe.failures) process.stdout.write(`${f.reader}: ${f.kind}: ${f.detail}\n`);
  process.stdout.write(`${JSON.stringify(tally)}\n`);
  process.exitCode = failuresIn(tally) > 0 ? 1 : 0;
} else {
  const seconds = number('seconds', values.seconds);
  const workers = number('workers', values.workers);
  process.stderr.write(`fuzz: seed ${seed}, ${seconds} s, ${workers} worker(s)\n`);
  const result = await runFuzz({ seconds, seed, workers, limitMs: number('limit-ms', values['limit-ms']) });
  process.stdout.write(`${formatReport(result)}\n`);
  process.exitCode = result.failures > 0 ? 1 : 0;
}
