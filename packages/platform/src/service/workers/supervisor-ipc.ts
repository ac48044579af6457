import type { Registry } from 'prom-client';
import type { Readiness, ReadinessReport } from '../../lifecycle/readiness.js';

/**
 * Messages between a supervisor and its workers over the cluster IPC channel. The
 * supervisor asks for their metrics (prom-client's JSON form, which
 * AggregatorRegistry.aggregate sums; or, when there is one worker and nothing to sum,
 * the exposition text itself) and their readiness: workers serve no HTTP of their own. Workers wait at the start barrier until the supervisor lets them go.
 */
export type Question = 'metrics' | 'metrics-text' | 'readiness';

export interface Ask {
  type: 'banstream:ask';
  id: number;
  question: Question;
}

export interface Answer {
  type: 'banstream:answer';
  id: number;
  metrics?: unknown[];
  metricsText?: string;
  readiness?: ReadinessReport;
  error?: string;
}

/**
 * A worker listens for questions now. Asked before, it would never answer: a message
 * that arrives before its listener is dropped, and the asker would wait out its timeout.
 */
export const ANSWERING = { type: 'banstream:answering' } as const;
/** A worker has reached the start barrier. */
export const AT_BARRIER = { type: 'banstream:at-barrier' } as const;
/** The supervisor opens the barrier. */
export const GO = { type: 'banstream:go' } as const;

function isMessage(message: unknown, type: string): boolean {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}

export const isAtBarrier = (message: unknown) => isMessage(message, AT_BARRIER.type);
export const isAnswering = (message: unknown) => isMessage(message, ANSWERING.type);

export function isAsk(message: unknown): message is Ask {
  return isMessage(message, 'banstream:ask');
}

export function isAnswer(message: unknown): message is Answer {
  return isMessage(message, 'banstream:answer');
}

/** Worker side: answers the supervisor's questions about this process. */
export function answerSupervisor(registry: Registry, readiness: Readiness): void {
  process.on('message', (message: unknown) => {
    if (!isAsk(message)) return;
    const reply = (part: Pick<Answer, 'metrics' | 'metricsText' | 'readiness' | 'error'>) => {
      if (process.connected) process.send?.({ type: 'banstream:answer', id: message.id, ...part } satisfies Answer);
    };
    const work =
      message.question === 'metrics'
        ? registry.getMetricsAsJSON().then((metrics) => ({ metrics }))
        : message.question === 'metrics-text'
          ? registry.metrics().then((metricsText) => ({ metricsText }))
          : readiness.report().then((report) => ({ readiness: report }));
    work.then(reply, (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }));
  });
  process.send?.(ANSWERING);
}

/** Worker side: resolves when the supervisor opens the start barrier (at once if it is already open). */
export function waitAtBarrier(): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (!isMessage(message, GO.type)) return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
    process.send?.(AT_BARRIER);
  });
}
