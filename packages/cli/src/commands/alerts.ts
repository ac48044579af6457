import { tryParseDuration } from '@banstream/core';
import type { Command } from '../command.js';
import { text } from '../command.js';
import { CliError, EXIT } from '../exit-codes.js';
import { isoSeconds } from '../format/table.js';

interface AlertView {
  alertId: string;
  scope: string;
  code: string;
  state: string;
  currentRate: number;
  baselineRate: number;
  zScore: number;
  ratio: number;
  at: number;
}

export function alertLine(a: AlertView): string {
  return `${isoSeconds(a.at)}  ${a.state.toUpperCase().padEnd(8)} ${a.scope}:${a.code}  ${a.currentRate.toFixed(1)} req/s vs ${a.baselineRate.toFixed(1)} usual (x${a.ratio.toFixed(1)}, z=${a.zScore.toFixed(1)})`;
}

export const alertCommands: Command[] = [
  {
    name: 'alerts tail',
    usage: 'banstream alerts tail [--since 1h] [--interval 2s] [--once] [--json]',
    summary: 'print recent alerts, then new ones as they come (Ctrl-C stops)',
    options: { since: { type: 'string' }, interval: { type: 'string' }, once: { type: 'boolean' } },
    async run({ api, values, json, print, io }) {
      const since = tryParseDuration(text(values, 'since') ?? '1h');
      const every = tryParseDuration(text(values, 'interval') ?? '2s');
      if (since === undefined || every === undefined) throw new CliError('--since and --interval take durations such as 1h, 2s', EXIT.usage);
      let cursor = io.now() - since;
      const seen = new Set<string>();
      let stop = false;
      void io.interrupted.then(() => (stop = true));
      for (;;) {
        const { alerts } = await api().get<{ alerts: AlertView[] }>('/v1/alerts', { since: cursor - 1, limit: 1000 });
        for (const a of alerts.reverse()) {
          const id = `${a.alertId}|${a.state}`;
          if (seen.has(id)) continue;
          seen.add(id);
          cursor = Math.max(cursor, a.at);
          print(json ? JSON.stringify(a) : alertLine(a));
        }
        if (values.once === true || stop) return;
        await Promise.race([new Promise((r) => setTimeout(r, every)), io.interrupted]);
        if (stop) return;
      }
    },
  },
];
