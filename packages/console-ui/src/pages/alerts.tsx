import { useEffect, useState } from 'preact/hooks';
import { api, message } from '../api.js';
import { LineChart } from '../charts/line-chart.js';
import { num, time } from '../format.js';
import { useReport } from '../status.js';
import type { Alert, PageProps } from './types.js';

/**
 * The band drawn around a baseline: the alert carries the rate, the baseline and the
 * z-score, so one standard deviation is (rate - baseline) / z. The band is baseline ± 2σ.
 */
function band(a: Alert): { lo: number; hi: number } {
  const sigma = a.zScore !== 0 ? Math.abs((a.currentRate - a.baselineRate) / a.zScore) : 0;
  return { lo: a.baselineRate - 2 * sigma, hi: a.baselineRate + 2 * sigma };
}

/** Geographic alerts: a timeline, and per country its rate at each alert against its baseline band. */
export function AlertsPage(_props: PageProps) {
  const report = useReport();
  const [alerts, setAlerts] = useState<Alert[] | undefined>(undefined);
  useEffect(() => {
    api<{ alerts: Alert[] }>('GET', '/v1/alerts?limit=500').then(
      (r) => setAlerts(r.alerts),
      (e) => report(`Reading the alerts failed: ${message(e)}`, 'error'),
    );
  }, []);
  const byCode = new Map<string, Alert[]>();
  for (const a of [...(alerts ?? [])].reverse()) byCode.set(`${a.scope} ${a.code}`, [...(byCode.get(`${a.scope} ${a.code}`) ?? []), a]);
  const hhmm = (x: number) => time(x).slice(5, 16);
  return (
    <section aria-labelledby="alerts-title">
      <h1 id="alerts-title">Alerts</h1>
      <h2>Timeline</h2>
      {alerts && alerts.length > 0 && (
        <LineChart
          label={`Alert timeline: ${alerts.length} alerts; red dots fired, green resolved, height is the rate`}
          series={[]}
          marks={alerts.map((a) => ({ x: a.at, y: a.currentRate, kind: a.state === 'fired' ? 'fired' : 'resolved' }))}
          formatX={hhmm}
          testId="alerts-timeline-chart"
        />
      )}
      <table data-testid="alerts-timeline">
        <caption>Most recent first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Where</th>
            <th scope="col">State</th>
            <th scope="col" class="num">
              Rate/s
            </th>
            <th scope="col" class="num">
              Baseline/s
            </th>
            <th scope="col" class="num">
              z
            </th>
          </tr>
        </thead>
        <tbody>
          {(alerts ?? []).map((a) => (
            <tr key={`${a.alertId}-${a.state}-${a.at}`} data-testid="alert-row">
              <td>{time(a.at)}</td>
              <td>
                {a.scope} {a.code}
              </td>
              <td>{a.state}</td>
              <td class="num">{num(a.currentRate)}</td>
              <td class="num">{num(a.baselineRate)}</td>
              <td class="num">{num(a.zScore)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {alerts && alerts.length === 0 && <p class="muted">No alert yet.</p>}
      <h2>Rate against the baseline band</h2>
      <div data-testid="alerts-bands">
        {[...byCode].slice(0, 12).map(([where, list]) => (
          <div key={where}>
            <h3>{where}</h3>
            <LineChart
              label={`${where}: rate at each alert (line) against the baseline ± 2σ (band)`}
              series={[{ points: list.map((a) => [a.at, a.currentRate] as const), kind: 'line2' }]}
              band={list.map((a) => ({ x: a.at, ...band(a) }))}
              formatX={hhmm}
            />
          </div>
        ))}
      </div>
    </section>
  );
}
