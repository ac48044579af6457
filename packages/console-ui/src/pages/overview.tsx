import { useEffect, useState } from 'preact/hooks';
import { BarChart } from '../charts/bar-chart.js';
import { LineChart } from '../charts/line-chart.js';
import { num, percent, time } from '../format.js';
import type { OverviewSnapshot, PageProps } from './types.js';

/** Points kept for the Overview's charts: two minutes at the default one-second tick. */
const HISTORY = 120;

/** Live: one server-sent event stream (/console/events) pushes a snapshot every tick; nothing is polled. */
export function OverviewPage(_props: PageProps) {
  const [snap, setSnap] = useState<OverviewSnapshot | undefined>(undefined);
  const [history, setHistory] = useState<OverviewSnapshot[]>([]);
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    const source = new EventSource('/console/events');
    source.addEventListener('overview', (e) => {
      const s = JSON.parse((e as MessageEvent<string>).data) as OverviewSnapshot;
      setSnap(s);
      setHistory((h) => [...h.slice(-(HISTORY - 1)), s]);
      setConnected(true);
    });
    source.onerror = () => setConnected(false);
    return () => source.close();
  }, []);

  const events = snap?.eventsPerSecond ?? snap?.eventRecordsPerSecond ?? null;
  const eventsLabel = snap?.eventsPerSecond === null && snap?.eventRecordsPerSecond !== null ? 'Event records/s in (events topic)' : 'Events/s in';
  const card = (id: string, label: string, value: number | null, digits = 1) => (
    <div class="card">
      <div class="label" id={`${id}-label`}>
        {label}
      </div>
      <div class="value" data-testid={id} data-value={value ?? ''}>
        {num(value, digits)}
      </div>
    </div>
  );
  const series = (pick: (s: OverviewSnapshot) => number | null) => history.map((s) => [s.at, pick(s) ?? Number.NaN] as const);
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <p class="muted">
        Last update:{' '}
        <time data-testid="overview-updated-at" data-updated-at={snap?.at ?? ''}>
          {snap ? time(snap.at) : 'waiting for the first update'}
        </time>
        {!connected && snap && ' (reconnecting…)'}
      </p>
      <div class="cards">
        {card('overview-events-per-second', eventsLabel, events)}
        {card('overview-bans-per-minute', 'Bans in the last minute', snap?.bansPerMinute ?? null, 0)}
        {card('overview-lifts-per-minute', 'Lifts in the last minute', snap?.liftsPerMinute ?? null, 0)}
        {card('overview-active-bans', 'Active bans', snap?.activeBans ?? null, 0)}
        {card('overview-open-alerts', 'Open geographic alerts', snap ? snap.openAlerts.length : null, 0)}
      </div>

      <h2>Traffic and bans, last two minutes</h2>
      <LineChart
        label="Events per second (blue) and bans per minute (red) over the last two minutes"
        series={[{ points: series((s) => s.eventsPerSecond ?? s.eventRecordsPerSecond) }, { points: series((s) => s.bansPerMinute), kind: 'line2' }]}
        formatX={(x) => time(x).slice(11, 19)}
        testId="overview-chart"
      />
      <p class="legend">Blue: events/s in. Red: bans in the last minute.</p>

      <h2>Denials by source at the enforcers</h2>
      {snap && snap.sources.length === 0 ? (
        <p class="muted">No enforcer metrics configured (CONTROL_CONSOLE_METRICS_URLS).</p>
      ) : (
        <table data-testid="overview-denials">
          <caption>Requests denied per second, by what decided</caption>
          <thead>
            <tr>
              <th scope="col">Source</th>
              <th scope="col" class="num">
                Denied/s
              </th>
            </tr>
          </thead>
          <tbody>
            {(snap?.denials ?? []).map((d) => (
              <tr key={d.source}>
                <td>{d.source}</td>
                <td class="num">{num(d.perSecond)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {snap?.sources.some((s) => !s.ok) && (
        <p class="error">
          Not answering:{' '}
          {snap.sources
            .filter((s) => !s.ok)
            .map((s) => `${s.url} (${s.error ?? 'error'})`)
            .join(', ')}
        </p>
      )}

      <h2>Subjects nearest their threshold</h2>
      <table data-testid="overview-nearest">
        <caption>Hot counts from the aggregator, highest share of the threshold first</caption>
        <thead>
          <tr>
            <th scope="col">Subject</th>
            <th scope="col">Policy</th>
            <th scope="col" class="num">
              Count
            </th>
            <th scope="col" class="num">
              Threshold
            </th>
            <th scope="col" class="num">
              Share
            </th>
          </tr>
        </thead>
        <tbody>
          {(snap?.nearest ?? []).map((n) => (
            <tr key={`${n.policyId}|${n.subject}`}>
              <td class="break">{n.subject}</td>
              <td>{n.policyId}</td>
              <td class="num">{num(n.count, 0)}</td>
              <td class="num">{num(n.threshold, 0)}</td>
              <td class="num">{percent(n.share)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {snap && snap.nearest.length === 0 && <p class="muted">No subject is near a threshold.</p>}

      <h2>Open geographic alerts</h2>
      {snap && snap.openAlerts.length === 0 ? (
        <p class="muted">None open.</p>
      ) : (
        <ul data-testid="overview-alerts">
          {(snap?.openAlerts ?? []).map((a) => (
            <li key={`${a.scope}:${a.code}`}>
              {a.scope} {a.code}: {num(a.currentRate)}/s against a baseline of {num(a.baselineRate)}/s (z {num(a.zScore)}), since {time(a.at)}
            </li>
          ))}
        </ul>
      )}
      {snap && snap.geo.length > 0 && (
        <>
          <h2>Rate per country</h2>
          <BarChart
            label="Requests per second per country"
            bars={snap.geo.slice(0, 12).map((g) => ({ label: `${g.country} (baseline ${num(g.baseline)})`, value: g.rate }))}
            format={(v) => num(v)}
            testId="overview-geo"
          />
        </>
      )}
    </section>
  );
}
