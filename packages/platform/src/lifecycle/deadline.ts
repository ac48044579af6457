import { BanstreamError, type ErrorCode } from '@banstream/core';

/**
 * Bounds a promise: rejects with a retryable BanstreamError when `ms` pass first,
 * naming what was being waited for. The underlying operation is not cancelled.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string, code: ErrorCode = 'KAFKA_TIMEOUT'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BanstreamError(code, `${what}: no answer within ${ms} ms`, { retryable: true, details: { timeoutMs: ms } })), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
