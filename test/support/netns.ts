import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { createCommands, cutCommand, execArgv, leftovers, netnsPlan, nodeOf, parseNetnsList, restoreCommand, type Command, type NetnsPlan } from './netns-plan.js';
import { exitOf, isAlive, REPO_ROOT, type RunningProcess } from './processes.js';

const run = promisify(execFile);

/**
 * Network namespaces for fault tests (layout and why a cut is a bridge port disabled:
 * netns-plan.ts). Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and iproute2.
 */
export interface NetnsLab {
  readonly plan: NetnsPlan;
  /** The test process's own address on the lab's network. */
  readonly hostAddress: string;
  address(name: string): string;
  /** Starts `program` inside node `name`'s namespace; output is kept like spawnService's. */
  spawn(name: string, program: string, args: readonly string[], options?: { env?: Record<string, string>; cwd?: string }): RunningProcess;
  /** Frames to and from the node are dropped from now on; its links stay up. */
  cut(name: string): Promise<void>;
  restore(name: string): Promise<void>;
  /** Whether the node is cut off now. */
  isCut(name: string): boolean;
  /** Kills whatever still runs inside the namespaces and removes them all. */
  close(): Promise<void>;
}

export async function createNetnsLab(names: readonly string[], subnet?: string): Promise<NetnsLab> {
  if (process.getuid?.() !== 0) {
    throw new Error('netns: network namespaces need root (CAP_NET_ADMIN and CAP_SYS_ADMIN): run the test as root, or in a container started with --cap-add NET_ADMIN --cap-add SYS_ADMIN');
  }
  await removeLeftoverLabs();
  const plan = netnsPlan(process.pid, names, subnet);
  const cut = new Set<string>();
  // Whatever way the process ends, no namespace, link or process of the lab stays behind.
  const onExit = (): void => removeLabSync(labNamespaces(plan), plan.rootLink);
  process.once('exit', onExit);
  try {
    for (const command of createCommands(plan)) await runCommand(command);
  } catch (error) {
    removeLabSync(labNamespaces(plan), plan.rootLink);
    process.off('exit', onExit);
    throw error;
  }
  return {
    plan,
    hostAddress: plan.hostAddress,
    address: (name) => nodeOf(plan, name).address,
    spawn(name, program, args, options = {}) {
      const [ip, ...argv] = execArgv(plan, name, program, args);
      const child = spawn(ip, argv, { cwd: options.cwd ?? REPO_ROOT, env: { PATH: process.env.PATH ?? '', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      return { child, output: () => out, exited: exitOf(child) };
    },
    async cut(name) {
      await runCommand(cutCommand(plan, name));
      cut.add(name);
    },
    async restore(name) {
      await runCommand(restoreCommand(plan, name));
      cut.delete(name);
    },
    isCut: (name) => cut.has(name),
    async close() {
      removeLabSync(labNamespaces(plan), plan.rootLink);
      process.off('exit', onExit);
    },
  };
}

async function runCommand([program, ...args]: Command): Promise<void> {
  try {
    await run(program, args);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`netns: \`${program} ${args.join(' ')}\` failed: ${stderr || (error as Error).message}`);
  }
}

function tryCommand([program, ...args]: Command): string {
  try {
    return execFileSync(program, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

/**
 * Removes a lab: kills what runs in its namespaces (a broker left by a crashed run),
 * deletes them and the root-side link (deleting the hub would remove it too, but
 * asynchronously, and the next lab reuses its address at once).
 */
function removeLabSync(namespaces: readonly string[], rootLink: string): void {
  for (const ns of namespaces) {
    for (const pid of tryCommand(['ip', 'netns', 'pids', ns]).split(/\s+/).filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
  for (const ns of namespaces) tryCommand(['ip', 'netns', 'del', ns]);
  tryCommand(['ip', 'link', 'del', rootLink]);
}

const labNamespaces = (plan: NetnsPlan): string[] => [...plan.nodes.map((n) => n.netns), plan.hub];

/** Removes the labs of test processes that died without cleaning up; returns the namespaces removed. */
export async function removeLeftoverLabs(): Promise<string[]> {
  const { stdout } = await run('ip', ['netns', 'list']).catch(() => ({ stdout: '' }));
  const removed: string[] = [];
  for (const [pid, namespaces] of leftovers(parseNetnsList(stdout), isAlive)) {
    removeLabSync(namespaces, netnsPlan(pid, ['x']).rootLink);
    removed.push(...namespaces);
  }
  return removed;
}
