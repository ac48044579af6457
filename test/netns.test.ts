import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { createNetnsLab, removeLeftoverLabs, type NetnsLab } from './support/netns.js';
import { createCommands, cutCommand, leftovers, netnsPlan, parseNetnsList } from './support/netns-plan.js';
import { exitWithin } from './support/processes.js';
import { waitUntil } from './support/infra.js';

const PORT = 39150;
// Long enough for a connect across the bridge (well under a millisecond here), short enough to keep the test quick.
const CONNECT_BOUND_MS = 1_500;

describe('netns plan', () => {
  it('names every namespace and link after the pid, with one address each', () => {
    const plan = netnsPlan(4194304, ['broker-1', 'gateway']);
    expect(plan.hub).toBe('bsn4194304-hub');
    expect(plan.rootLink).toBe('bsn4194304r');
    expect(plan.rootLink.length).toBeLessThanOrEqual(15);
    expect(plan.nodes).toEqual([
      { name: 'broker-1', netns: 'bsn4194304-broker-1', hubPort: 'p0', address: '10.231.0.10' },
      { name: 'gateway', netns: 'bsn4194304-gateway', hubPort: 'p1', address: '10.231.0.11' },
    ]);
    expect(createCommands(plan)).toContainEqual(['ip', '-n', 'bsn4194304-gateway', 'addr', 'add', '10.231.0.11/24', 'dev', 'eth0']);
    expect(cutCommand(plan, 'gateway')).toEqual(['bridge', '-n', 'bsn4194304-hub', 'link', 'set', 'dev', 'p1', 'state', '0']);
  });

  it('refuses names an interface or namespace could not carry, and unknown nodes', () => {
    expect(() => netnsPlan(1, ['Broker'])).toThrow(/node name "Broker"/);
    expect(() => netnsPlan(1, ['a', 'a'])).toThrow(/node name a given twice/);
    expect(() => netnsPlan(1, ['a'], '10.300.0')).toThrow(/subnet must be three octets/);
    expect(() => cutCommand(netnsPlan(1, ['a']), 'b')).toThrow(/no node "b" \(nodes: a\)/);
  });

  it("finds leftovers of dead pids only, and never another program's namespaces", () => {
    const names = parseNetnsList('bsn12-hub (id: 3)\nbsn12-broker-1 (id: 4)\nbsn77-hub\nother-ns\nbsnx-hub\n');
    expect(leftovers(names, (pid) => pid === 77)).toEqual(new Map([[12, ['bsn12-hub', 'bsn12-broker-1']]]));
  });
});

describe('netns lab', () => {
  let lab: NetnsLab | undefined;

  afterAll(async () => {
    await lab?.close();
  });

  it('joins namespaces on a bridge, and a cut silences one of them until it is restored', async () => {
    lab = await createNetnsLab(['alpha', 'beta']);
    const l = lab;
    const server = l.spawn('alpha', process.execPath, ['-e', `require('node:net').createServer((s) => s.pipe(s)).listen(${PORT}, '${l.address('alpha')}', () => console.log('listening'))`]);
    await waitUntil(
      () => server.output().includes('listening'),
      () => `the echo server in alpha: ${server.output()}`,
      10_000,
      20,
    );
    // From beta (another namespace) and from the test's own namespace.
    const fromBeta = () => probe(l, 'beta', l.address('alpha'));
    expect(await fromBeta()).toBe('connected');
    expect(await connectFromHere(l.address('alpha'))).toBe('connected');

    // A connection open across the cut: what is written during the cut arrives only after it.
    const open = await openSocket(l.address('alpha'));
    const received: string[] = [];
    open.on('data', (d: Buffer) => received.push(d.toString()));
    open.write('before;');
    await waitUntil(() => received.join('') === 'before;', 'the echo before the cut', 5_000, 10);

    await l.cut('alpha');
    expect(l.isCut('alpha')).toBe(true);
    open.write('during;');
    expect(await fromBeta()).not.toBe('connected');
    expect(await connectFromHere(l.address('alpha'))).not.toBe('connected');
    expect(received.join('')).toBe('before;');
    // Only alpha is cut off: beta still reaches the test's namespace.
    expect(await probe(l, 'beta', l.hostAddress, 1)).toMatch(/^(connected|refused)$/);
    // Its link is still up with its address: a partition, not an unplugged cable.
    expect(execFileSync('ip', ['-n', l.plan.nodes[0]!.netns, '-o', 'addr', 'show', 'dev', 'eth0'], { encoding: 'utf8' })).toContain(`inet ${l.address('alpha')}/24`);

    await l.restore('alpha');
    expect(l.isCut('alpha')).toBe(false);
    // TCP retransmits what the cut swallowed: the connection survived.
    await waitUntil(
      () => received.join('') === 'before;during;',
      () => `the echo written during the cut (got ${JSON.stringify(received.join(''))})`,
      30_000,
      50,
    );
    expect(await fromBeta()).toBe('connected');
    expect(await connectFromHere(l.address('alpha'))).toBe('connected');
    open.destroy();
    server.child.kill('SIGTERM');
    await exitWithin(server, 5_000);
  });

  it('removes every namespace and link it made, and what a dead run left behind', async () => {
    const l = lab ?? (await createNetnsLab(['alpha']));
    // A leftover of a pid that no longer runs.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    execFileSync('ip', ['netns', 'add', `bsn${dead}-hub`]);
    await l.close();
    lab = undefined;
    const ours = String(process.pid);
    const list = () => parseNetnsList(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }));
    expect(list().filter((n) => n.startsWith(`bsn${ours}-`))).toEqual([]);
    expect(spawnSync('ip', ['link', 'show', `bsn${ours}r`]).status).not.toBe(0);
    expect(await removeLeftoverLabs()).toEqual([`bsn${dead}-hub`]);
    expect(list()).not.toContain(`bsn${dead}-hub`);
  });
});

/** Connects from inside node `from` to `host:port`: `connected`, `refused` (nothing listens), or the failure. */
async function probe(lab: NetnsLab, from: string, host: string, port = PORT): Promise<string> {
  const script = `const s = require('node:net').connect(${port}, '${host}');
    s.setTimeout(${CONNECT_BOUND_MS}, () => { console.log('timeout'); process.exit(0); });
    s.on('connect', () => { console.log('connected'); process.exit(0); });
    s.on('error', (e) => { console.log(e.code === 'ECONNREFUSED' ? 'refused' : e.code); process.exit(0); });`;
  const proc = lab.spawn(from, process.execPath, ['-e', script]);
  await exitWithin(proc, 10_000);
  return proc.output().trim();
}

async function connectFromHere(host: string): Promise<string> {
  return openSocket(host).then(
    (s) => {
      s.destroy();
      return 'connected';
    },
    (error: Error) => error.message,
  );
}

function openSocket(host: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(PORT, host);
    socket.setTimeout(CONNECT_BOUND_MS, () => {
      socket.destroy();
      reject(new Error('timeout'));
    });
    socket.once('connect', () => {
      socket.setTimeout(0);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}
