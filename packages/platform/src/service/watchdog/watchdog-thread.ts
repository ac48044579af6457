/**
 * The watchdog thread (worker_threads) of a supervised process. It polls the record
 * in hand (in-hand.ts); when one record has been held past the budget, or the event
 * loop has been silent too long, it leaves a trap and a note (traps.ts), logs one
 * line and kills its own process with SIGKILL: a synchronous loop cannot be
 * interrupted from its own thread, and the supervisor replaces the process.
 * Everything here is synchronous and never waits on the main thread.
 */
import { writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { lookAt, StallJudge, type Stall } from './in-hand.js';
import { TrapStore, type Trap } from './traps.js';

export interface WatchdogThreadData {
  buffer: SharedArrayBuffer;
  budgetMs: number;
  loopMs: number;
  pollMs: number;
  stateDir: string;
  /** Fields of every log line (service, worker), as the process's own logger writes them. */
  bindings: Record<string, unknown>;
}

const data = workerData as WatchdogThreadData;
const store = new TrapStore(data.stateDir);
const judge = new StallJudge({ budgetMs: data.budgetMs, loopMs: data.loopMs });
/** Topic names by index, sent by the main thread as it watches them. */
const topics: string[] = [];

parentPort?.on('message', (message: { index: number; topic: string }) => {
  topics[message.index] = message.topic;
});

setInterval(() => {
  const stall = judge.look(lookAt(data.buffer), Date.now());
  if (stall) act(stall);
}, data.pollMs);

function act(stall: Stall): void {
  const at = Date.now();
  let trap: Trap | undefined;
  try {
    if (stall.kind === 'record') {
      trap = { topic: topics[stall.topic] ?? `#${stall.topic}`, partition: stall.partition, offset: String(stall.offset), heldMs: stall.heldMs, budgetMs: data.budgetMs, pid: process.pid, at };
      store.write(trap);
    }
    store.writeNote({ pid: process.pid, kind: stall.kind, at, ...(trap ? { trap } : { silentMs: (stall as { silentMs: number }).silentMs }) });
  } catch (error) {
    // Killed all the same: a stuck process helps nobody; without its trap the record may stall the next one too.
    log(50, { err: { message: (error as Error).message } }, 'could not write the trap of a stalled record');
  }
  const current = lookAt(data.buffer);
  if (stall.kind === 'record' && current.generation !== stall.generation) {
    // Finished in the meantime: not stuck after all; its slowness is the main thread's to report.
    if (trap) store.remove(trap);
    store.takeNote(process.pid);
    return;
  }
  if (trap)
    log(
      50,
      { topic: trap.topic, partition: trap.partition, offset: trap.offset, heldMs: trap.heldMs, budgetMs: data.budgetMs },
      'record in hand past its time budget: quarantined; killing this process',
    );
  else log(50, { silentMs: (stall as { silentMs: number }).silentMs, limitMs: data.loopMs }, 'event loop stalled outside any record: killing this process');
  process.kill(process.pid, 'SIGKILL');
}

/** One pino-shaped line on stdout, written at once (the process's logger is on the stuck thread). */
function log(level: number, fields: Record<string, unknown>, msg: string): void {
  const line = JSON.stringify({ level, time: new Date().toISOString(), ...data.bindings, pid: process.pid, component: 'watchdog', ...fields, msg });
  try {
    writeSync(1, `${line}\n`);
  } catch {
    // Nowhere to say it.
  }
}
