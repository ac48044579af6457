import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Driver } from './driver.js';
import { DEMO_SCENARIO, Scenario, type DemoRequest } from './scenario.js';

/** A local HTTP server that answers every request with `answer`. */
async function edge(answer: 'reset' | number): Promise<{ url: string; server: Server; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    if (answer === 'reset') req.socket.destroy();
    else res.writeHead(answer).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, hits: () => hits };
}

const request: DemoRequest = { at: 0, cls: 'legit', ip: '192.0.2.10', country: 'GB', method: 'GET', path: '/' };
const driverFor = (edges: string[]) => new Driver({ edges, scenario: new Scenario({ ...DEMO_SCENARIO, partitions: 6 }, Date.now()) });

describe('the demo traffic driver', () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
  });

  it('sends a request that got no answer once more, to the next edge, and counts why', async () => {
    const [broken, good] = [await edge('reset'), await edge(200)];
    servers.push(broken.server, good.server);
    const driver = driverFor([broken.url, good.url]);
    await driver.send(request);
    expect(driver.stats.legit).toEqual({ sent: 1, allowed: 1, denied: 0, erred: 0, retried: 1, failed: 0 });
    expect([broken.hits(), good.hits()]).toEqual([1, 1]);
    expect(Object.values(driver.failures.legit ?? {})).toEqual([1]);
  });

  it('counts a request failed when the retry gets no answer either, and a server error apart from a refusal', async () => {
    const [broken, failing, refusing] = [await edge('reset'), await edge(503), await edge(429)];
    servers.push(broken.server, failing.server, refusing.server);
    const lost = driverFor([broken.url]);
    await lost.send(request);
    expect(lost.stats.legit).toMatchObject({ sent: 1, allowed: 0, retried: 1, failed: 1 });
    const erring = driverFor([failing.url]);
    await erring.send(request);
    expect(erring.stats.legit).toMatchObject({ sent: 1, allowed: 0, denied: 0, erred: 1, failed: 0 });
    const refused = driverFor([refusing.url]);
    await refused.send(request);
    expect(refused.stats.legit).toMatchObject({ sent: 1, denied: 1, erred: 0 });
    expect([...refused.deniedLegit]).toEqual(['192.0.2.10']);
  });
});
