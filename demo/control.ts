/** The demo's policies applied the way a security team does: one set, through the control API. */
import { demoPolicies } from './scenario.js';

export async function applyDemoPolicies(controlUrl: string, token: string, banDuration?: string): Promise<void> {
  const res = await fetch(`${controlUrl}/v1/policies/apply`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ policies: demoPolicies(banDuration) }),
  });
  if (res.status !== 200) throw new Error(`applying the demo policies: HTTP ${res.status} ${await res.text()}`);
}
