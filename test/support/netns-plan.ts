/**
 * The `ip`/`bridge` commands behind test/support/netns.ts, as data: which namespaces,
 * links and addresses a test's network has, how one node is cut off and restored, and
 * which leftovers of an earlier, crashed run may be removed. No I/O here.
 *
 * Layout: a hub namespace holds a bridge; each node is a namespace of its own whose
 * `eth0` is a veth into the hub, plugged into the bridge; one more veth joins the
 * caller's (root) namespace to the bridge so the test process reaches every node.
 * Every name carries the test process's pid: a later run removes what a dead pid left.
 */

/** Prefix of every namespace and root-side link a lab makes. */
export const NETNS_PREFIX = 'bsn';

export interface NetnsNodePlan {
  /** The test's own name for the node, e.g. `broker-1`. */
  name: string;
  /** The network namespace, `bsn<pid>-<name>`. */
  netns: string;
  /** Its veth's end in the hub, plugged into the bridge (the port a cut disables). */
  hubPort: string;
  address: string;
}

export interface NetnsPlan {
  pid: number;
  hub: string;
  /** The root namespace's end of its link to the bridge. */
  rootLink: string;
  /** The root namespace's address on the lab's network. */
  hostAddress: string;
  prefixLength: number;
  nodes: NetnsNodePlan[];
}

const NAME = /^[a-z][a-z0-9-]{0,19}$/;

/**
 * Names and addresses for `names` on `subnet` (three octets, /24): the root side gets
 * .1, nodes .10 onwards.
 */
export function netnsPlan(pid: number, names: readonly string[], subnet = '10.231.0'): NetnsPlan {
  if (!/^\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(subnet) || subnet.split('.').some((o) => Number(o) > 255)) {
    throw new Error(`netns: subnet must be three octets such as 10.231.0 (got ${JSON.stringify(subnet)})`);
  }
  if (names.length === 0 || names.length > 200) throw new Error(`netns: from 1 to 200 nodes (got ${names.length})`);
  for (const name of names) {
    if (!NAME.test(name)) throw new Error(`netns: node name ${JSON.stringify(name)}: lower-case letters, digits and dashes, at most 20, starting with a letter`);
  }
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated !== undefined) throw new Error(`netns: node name ${repeated} given twice`);
  const base = `${NETNS_PREFIX}${pid}`;
  return {
    pid,
    hub: `${base}-hub`,
    // Interface names are at most 15 characters: bsn + a pid of up to 7 digits + r.
    rootLink: `${base}r`,
    hostAddress: `${subnet}.1`,
    prefixLength: 24,
    nodes: names.map((name, i) => ({ name, netns: `${base}-${name}`, hubPort: `p${i}`, address: `${subnet}.${10 + i}` })),
  };
}

/** One command: the program (`ip` or `bridge`) and its arguments. */
export type Command = [program: string, ...args: string[]];

/** What builds the lab, in order. */
export function createCommands(plan: NetnsPlan): Command[] {
  const { hub, rootLink, hostAddress, prefixLength } = plan;
  const commands: Command[] = [
    ['ip', 'netns', 'add', hub],
    ['ip', '-n', hub, 'link', 'add', 'br0', 'type', 'bridge'],
    ['ip', '-n', hub, 'link', 'set', 'br0', 'up'],
    ['ip', 'link', 'add', rootLink, 'type', 'veth', 'peer', 'name', 'host', 'netns', hub],
    ['ip', '-n', hub, 'link', 'set', 'host', 'master', 'br0', 'up'],
    ['ip', 'addr', 'add', `${hostAddress}/${prefixLength}`, 'dev', rootLink],
    ['ip', 'link', 'set', rootLink, 'up'],
  ];
  for (const node of plan.nodes) {
    commands.push(
      ['ip', 'netns', 'add', node.netns],
      ['ip', '-n', node.netns, 'link', 'set', 'lo', 'up'],
      ['ip', '-n', node.netns, 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', node.hubPort, 'netns', hub],
      ['ip', '-n', hub, 'link', 'set', node.hubPort, 'master', 'br0', 'up'],
      ['ip', '-n', node.netns, 'addr', 'add', `${node.address}/${prefixLength}`, 'dev', 'eth0'],
      ['ip', '-n', node.netns, 'link', 'set', 'eth0', 'up'],
    );
  }
  return commands;
}

/**
 * A partition, not an unplugged cable: the bridge stops forwarding on the node's port
 * (STP state "disabled"), so frames to and from it vanish while both veth ends stay up
 * with their carrier and routes. Peers see silence and time out, as across a failed
 * switch or firewall. `ip link set down` would instead remove the node's routes, and
 * its own sends would fail at once with ENETUNREACH, which a real partition never does.
 * (tc/netem and iptables DROP would do too, but this kernel has neither.)
 */
export function cutCommand(plan: NetnsPlan, name: string): Command {
  return ['bridge', '-n', plan.hub, 'link', 'set', 'dev', nodeOf(plan, name).hubPort, 'state', '0'];
}

/** Back to forwarding (STP off: no listening/learning delay). */
export function restoreCommand(plan: NetnsPlan, name: string): Command {
  return ['bridge', '-n', plan.hub, 'link', 'set', 'dev', nodeOf(plan, name).hubPort, 'state', '3'];
}

/** The argv that runs a program inside a node's namespace (`ip netns exec` execs it: same pid). */
export function execArgv(plan: NetnsPlan, name: string, program: string, args: readonly string[]): Command {
  return ['ip', 'netns', 'exec', nodeOf(plan, name).netns, program, ...args];
}

export function nodeOf(plan: NetnsPlan, name: string): NetnsNodePlan {
  const node = plan.nodes.find((n) => n.name === name);
  if (!node) throw new Error(`netns: no node ${JSON.stringify(name)} (nodes: ${plan.nodes.map((n) => n.name).join(', ')})`);
  return node;
}

/**
 * Of `ip netns list`'s names, the ones a lab of a process no longer running left
 * behind (`alive` says whether a pid runs), grouped by that pid.
 */
export function leftovers(namespaces: readonly string[], alive: (pid: number) => boolean): Map<number, string[]> {
  const out = new Map<number, string[]>();
  const pattern = new RegExp(`^${NETNS_PREFIX}(\\d+)-[a-z][a-z0-9-]*$`);
  for (const ns of namespaces) {
    const pid = Number(pattern.exec(ns)?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
    out.set(pid, [...(out.get(pid) ?? []), ns]);
  }
  return out;
}

/** `ip netns list` prints `name` or `name (id: N)` per line. */
export function parseNetnsList(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n !== '');
}
