import { useEffect, useRef, useState } from 'preact/hooks';
import type { PlannedChange } from '@banstream/api';
import { api, message, type FieldError } from '../api.js';
import { time } from '../format.js';
import { useReport } from '../status.js';
import { toYaml } from '../to-yaml.js';
import { Backtest } from './backtest.js';
import { canWrite, isAdmin, type PageProps } from './types.js';

interface PolicyView {
  id: string;
  version: number;
  mode: string;
  enabled: boolean;
  description: string;
  owner: string;
  updatedBy: string;
  updatedAt: number;
  spec?: Record<string, unknown>;
  invalid?: string;
}

interface Check {
  ok: boolean;
  errors?: FieldError[];
  policies?: Record<string, unknown>[];
  plan?: PlannedChange[];
}

const TEMPLATE = `id: new-policy
description: what this policy stops
key: [ip]
threshold:
  count: 100
  interval: 1m
action:
  type: ban
  banDuration: 10m
mode: preview
`;

/** Policies: the list with versions, a YAML editor checked as you type by the CLI's validator (POST /v1/policies/check), the plan, apply, and a backtest. */
export function PoliciesPage({ session }: PageProps) {
  const report = useReport();
  const [policies, setPolicies] = useState<PolicyView[] | undefined>(undefined);
  const [versions, setVersions] = useState<{ id: string; list: PolicyView[] } | undefined>(undefined);
  const [text, setText] = useState('');
  const [check, setCheck] = useState<Check | undefined>(undefined);
  const [reload, setReload] = useState(0);
  const seq = useRef(0);

  useEffect(() => {
    api<{ policies: PolicyView[] }>('GET', '/v1/policies').then(
      (r) => setPolicies(r.policies),
      (e) => report(`Reading the policies failed: ${message(e)}`, 'error'),
    );
  }, [reload]);

  // Validate as the author types: the server's answer to the latest text wins.
  useEffect(() => {
    if (text.trim() === '') {
      setCheck(undefined);
      return;
    }
    const mine = ++seq.current;
    const timer = setTimeout(() => {
      api<Check>('POST', '/v1/policies/check', { text }).then(
        (c) => mine === seq.current && setCheck(c),
        (e) => mine === seq.current && setCheck({ ok: false, errors: [{ path: '(request)', message: message(e) }] }),
      );
    }, 300);
    return () => clearTimeout(timer);
  }, [text, reload]);

  const edit = (p: PolicyView) => {
    const { id, ...rest } = p.spec ?? {};
    setText(toYaml({ id, ...rest }));
    document.getElementById('policy-editor')?.focus();
  };
  const showVersions = async (id: string) => {
    try {
      const r = await api<{ versions: PolicyView[] }>('GET', `/v1/policies/${encodeURIComponent(id)}/versions`);
      setVersions({ id, list: r.versions });
    } catch (e) {
      report(message(e), 'error');
    }
  };
  const apply = async () => {
    if (!check?.ok || !check.policies) return;
    try {
      const r = await api<{ changes: PlannedChange[] }>('POST', '/v1/policies/apply', { policies: check.policies });
      report(`Applied: ${r.changes.map((c) => `${c.id} ${c.action}`).join(', ')}.`);
      setReload((n) => n + 1);
    } catch (e) {
      report(`Apply refused: ${message(e)}`, 'error');
    }
  };

  return (
    <section aria-labelledby="policies-title">
      <h1 id="policies-title">Policies</h1>
      <table data-testid="policies-table">
        <caption>Stored policies</caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Version</th>
            <th scope="col">Mode</th>
            <th scope="col">Enabled</th>
            <th scope="col">Updated</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(policies ?? []).map((p) => (
            <tr key={p.id} data-testid="policy-row" data-policy-id={p.id}>
              <td>
                {p.id}
                {p.description && <div class="muted">{p.description}</div>}
                {p.invalid && <div class="error">{p.invalid}</div>}
              </td>
              <td>{p.version}</td>
              <td>{p.mode}</td>
              <td>{p.enabled ? 'yes' : 'no'}</td>
              <td>
                {time(p.updatedAt)} by {p.updatedBy}
              </td>
              <td>
                <button type="button" class="secondary" data-testid="policy-edit" disabled={!p.spec} onClick={() => edit(p)}>
                  Edit
                </button>{' '}
                <button type="button" class="secondary" data-testid="policy-versions-button" onClick={() => showVersions(p.id)}>
                  Versions
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {policies && policies.length === 0 && <p class="muted">No policies yet.</p>}
      {versions && (
        <div class="detail" data-testid="policy-versions">
          <h2>Versions of {versions.id}</h2>
          <ul>
            {versions.list.map((v) => (
              <li key={v.version}>
                version {v.version}: {v.mode}, {v.enabled ? 'enabled' : 'disabled'}, {time(v.updatedAt)} by {v.updatedBy}
              </li>
            ))}
          </ul>
        </div>
      )}

      <h2>Editor</h2>
      <p>
        <button type="button" class="secondary" data-testid="policy-new" onClick={() => setText(TEMPLATE)}>
          New policy
        </button>
      </p>
      <div class="editor-grid">
        <div>
          <label for="policy-editor">Policy (YAML)</label>
          <textarea id="policy-editor" rows={22} spellcheck={false} value={text} onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} data-testid="policy-editor" />
        </div>
        <div>
          <Validation check={check} />
          {check?.ok && check.plan && <Plan plan={check.plan} />}
          {isAdmin(session) && (
            <button type="button" data-testid="policy-apply" disabled={!check?.ok} onClick={apply}>
              Apply
            </button>
          )}
          {!isAdmin(session) && <p class="muted">Applying policies needs the admin role.</p>}
        </div>
      </div>
      {canWrite(session) && <Backtest policy={check?.ok ? check.policies?.[0] : undefined} />}
    </section>
  );
}

function Validation({ check }: { check: Check | undefined }) {
  return (
    <div data-testid="policy-validation" aria-live="polite">
      {check && !check.ok && (
        <ul class="errors">
          {(check.errors ?? []).map((e, i) => (
            <li key={i} data-testid="policy-error" data-path={e.path}>
              {e.path}: {e.message}
              {e.line !== undefined ? ` (line ${e.line}, column ${e.column})` : ''}
            </li>
          ))}
        </ul>
      )}
      {check?.ok && <p class="ok">Valid.</p>}
    </div>
  );
}

function Plan({ plan }: { plan: PlannedChange[] }) {
  const show = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v));
  return (
    <div class="plan" data-testid="policy-plan">
      <h3>Plan</h3>
      {plan.map((c) => (
        <div key={c.id} data-testid="policy-plan-entry" data-action={c.action}>
          <strong>{c.id}</strong>: {c.action}
          {'version' in c && ` (now version ${c.version})`}
          {'fields' in c && c.fields.length > 0 && (
            <ul class="plan-changes">
              {c.fields.map((f) => (
                <li key={f.path}>
                  {f.path}: {show(f.before)} → {show(f.after)}
                </li>
              ))}
            </ul>
          )}
        </div>
      ))}
    </div>
  );
}
