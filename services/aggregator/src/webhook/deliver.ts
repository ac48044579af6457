import { BanstreamError } from '@banstream/core';

export interface WebhookTarget {
  url: string;
  timeoutMs: number;
  /** Tries after the first. */
  retries: number;
  /** Wait before the first retry; doubles each time, jittered, at most MAX_BACKOFF_MS. */
  backoffMs: number;
}

export interface DeliveryHooks {
  /** Waits `ms`; the notifier keeps its group membership alive meanwhile. */
  sleep(ms: number): Promise<void>;
  random(): number;
  /** Told before each retry, with why the last try failed (no URL, no secret). */
  onRetry(reason: string, attempt: number): void;
}

const MAX_BACKOFF_MS = 60_000;

/**
 * POSTs a JSON body and retries what a retry can fix: network errors, timeouts,
 * 408, 429 (honouring Retry-After) and 5xx, with exponential backoff and jitter.
 * Other 4xx answers mean the request itself is wrong: no retry. Errors name the
 * status or the network failure, never the URL (Slack's carries its token).
 */
export async function deliver(target: WebhookTarget, body: string, headers: Record<string, string>, hooks: DeliveryHooks): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    let reason: string;
    let retryAfterMs = 0;
    try {
      const res = await fetch(target.url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers },
        signal: AbortSignal.timeout(target.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) return attempt + 1;
      reason = `HTTP ${res.status}`;
      if (!retryable(res.status)) throw new BanstreamError('WEBHOOK_REFUSED', `webhook answered ${reason}: not retried`, { retryable: false, details: { status: res.status } });
      retryAfterMs = retryAfter(res.headers.get('retry-after'));
    } catch (error) {
      if (error instanceof BanstreamError) throw error;
      reason = networkReason(error);
    }
    if (attempt >= target.retries) {
      throw new BanstreamError('WEBHOOK_UNAVAILABLE', `webhook failed ${attempt + 1} times, last: ${reason}`, { retryable: true, details: { attempts: attempt + 1 } });
    }
    hooks.onRetry(reason, attempt + 1);
    const backoff = Math.min(MAX_BACKOFF_MS, target.backoffMs * 2 ** attempt) * (0.5 + hooks.random() / 2);
    await hooks.sleep(Math.min(MAX_BACKOFF_MS, Math.max(backoff, retryAfterMs)));
  }
}

function retryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

function retryAfter(header: string | null): number {
  const seconds = Number(header);
  return header !== null && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
}

function networkReason(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'timed out';
  const cause = error instanceof Error ? (error.cause as { code?: string } | undefined) : undefined;
  return cause?.code ?? (error instanceof Error ? error.name : 'network error');
}
