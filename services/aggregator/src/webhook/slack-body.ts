import { createHmac } from 'node:crypto';
import type { GeoAlert } from '@banstream/schemas';

const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;

/** A Slack incoming-webhook body (`text`, with `blocks` for clients that show them) for one alert. */
export function slackBody(alert: GeoAlert): { text: string; blocks: unknown[] } {
  const what = `${alert.code} (${alert.scope})`;
  const usual = `${rate(alert.baselineRate)} usual for ${hourName(alert)}`;
  const text =
    alert.state === 'fired'
      ? `:rotating_light: Traffic spike from ${what}: ${rate(alert.currentRate)}, ${alert.ratio.toFixed(1)}× the ${usual} (z ${alert.zScore.toFixed(1)}).`
      : `:white_check_mark: Resolved: traffic from ${what} is back to normal: ${rate(alert.currentRate)}, ${usual}.`;
  const fields = [
    ['Current', rate(alert.currentRate)],
    ['Baseline', rate(alert.baselineRate)],
    ['Ratio', `${alert.ratio.toFixed(2)}×`],
    ['z-score', alert.zScore.toFixed(2)],
  ].map(([k, v]) => ({ type: 'mrkdwn', text: `*${k}*\n${v}` }));
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text } },
      { type: 'section', fields },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `alert \`${alert.alertId}\` · ${alert.state} at ${new Date(alert.at).toISOString()} (event time)` }] },
    ],
  };
}

/**
 * Headers that let a receiver check the body came from us: HMAC-SHA256 with the
 * shared secret over `v1:<unix seconds>:<body>`, as hex, the way Slack signs its
 * own requests. Without a secret, no signature.
 */
export function signatureHeaders(body: string, secret: string | undefined, nowMs: number): Record<string, string> {
  if (!secret) return {};
  const timestamp = String(Math.floor(nowMs / 1000));
  const signature = createHmac('sha256', secret).update(`v1:${timestamp}:${body}`).digest('hex');
  return { 'x-banstream-timestamp': timestamp, 'x-banstream-signature': `v1=${signature}` };
}

function rate(perSecond: number): string {
  return `${perSecond >= 10 ? perSecond.toFixed(0) : perSecond.toPrecision(2)} req/s`;
}

function hourName(alert: GeoAlert): string {
  const h = alert.localHourOfWeek ?? alert.hourOfWeek;
  const zone = alert.localHourOfWeek === null ? 'UTC' : alert.timeZone;
  return `${DAYS[Math.floor(h / 24)] ?? '?'} ${String(h % 24).padStart(2, '0')}:00 ${zone}`;
}
