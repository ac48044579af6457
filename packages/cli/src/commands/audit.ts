import type { Command } from '../command.js';
import { text } from '../command.js';
import { isoSeconds, table } from '../format/table.js';
import { timeArg } from './time-arg.js';

interface AuditView {
  auditId: string;
  actor: string;
  action: string;
  target: string;
  at: number;
  forced: string | null;
}

export const auditCommand: Command = {
  name: 'audit',
  usage: 'banstream audit [--actor NAME] [--target ID] [--action ban.lift|ban|…] [--since 7d|ISO] [--until ISO] [--limit N] [--after CURSOR] [--json]',
  summary: 'search the audit trail: who changed what, and when (oldest first)',
  options: {
    actor: { type: 'string' },
    target: { type: 'string' },
    action: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    limit: { type: 'string' },
    after: { type: 'string' },
  },
  async run({ api, values, json, print, io }) {
    const now = io.now();
    const page = await api().get<{ records: AuditView[]; next: string | null; scanned: number }>('/v1/audit', {
      actor: text(values, 'actor'),
      target: text(values, 'target'),
      action: text(values, 'action'),
      since: timeArg(text(values, 'since'), 'since', now),
      until: timeArg(text(values, 'until'), 'until', now),
      limit: text(values, 'limit') ?? 100,
      after: text(values, 'after'),
    });
    if (json) return print(JSON.stringify(page, null, 2));
    print(
      table(page.records, [
        { header: 'AT', value: (r) => isoSeconds(r.at) },
        { header: 'ACTOR', value: (r) => r.actor },
        { header: 'ACTION', value: (r) => r.action },
        { header: 'TARGET', value: (r) => r.target, max: 60 },
        { header: 'FORCED', value: (r) => r.forced ?? '' },
      ]),
    );
    print(`${page.records.length} record(s), ${page.scanned} read${page.next ? `; more: --after ${page.next}` : ''}`);
  },
};
