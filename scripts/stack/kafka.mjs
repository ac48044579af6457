// The real Apache Kafka broker, fetched from Maven Central and run in KRaft mode
// on the machine's Java, with its own ports, data folder and logs.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { kafkaNodeProperties } from './kafka-config.mjs';
import { StackError, isAlive, isOurProcess, ownedProcessStatus, portAnswers, readPid, stopOwnedProcess, stopProcess, tail, waitFor, which, writePid } from './processes.mjs';

function requireJava() {
  if (!which('java')) throw new StackError('Java not found: install a JDK 17 or newer (Debian: apt-get install openjdk-17-jre-headless).');
  // `java -version` prints to stderr.
  const version = execFileSync('sh', ['-c', 'java -version 2>&1'], { encoding: 'utf8' });
  const major = Number(/version "(\d+)/.exec(version)?.[1] ?? 0);
  if (major < 17) throw new StackError(`Java 17 or newer is needed to run Kafka; found: ${version.split('\n')[0]}`);
}

/** Downloads the broker jars with Maven once; a changed pom fetches again. */
export function fetchKafka(s, log = console.log) {
  const pomHash = createHash('sha256').update(readFileSync(s.kafkaPom)).digest('hex').slice(0, 16);
  const marker = join(s.kafkaLibs, `.fetched-${pomHash}`);
  if (existsSync(marker)) return;
  if (!which('mvn')) throw new StackError('Maven (mvn) not found: it fetches Kafka from Maven Central. Install it (Debian: apt-get install maven).');
  requireJava();
  log(`fetching Apache Kafka from Maven Central into ${s.kafkaLibs} ...`);
  mkdirSync(s.kafkaLibs, { recursive: true });
  try {
    execFileSync('mvn', ['-q', '-B', '-f', s.kafkaPom, 'dependency:copy-dependencies', `-Dkafka.libs.dir=${s.kafkaLibs}`], { stdio: 'inherit' });
  } catch (cause) {
    throw new StackError(`Maven could not fetch Kafka (see its output above): ${cause.message}`);
  }
  writeFileSync(marker, new Date().toISOString());
}

/** Every node of the stack: the brokers, then the dedicated controllers if any. */
const allNodes = (s) => [...s.kafkaNodes, ...s.kafkaControllers];

function writeServerProperties(s, node) {
  const quorum = s.kafkaControllers.length > 0 ? s.kafkaControllers : s.kafkaNodes;
  const voters = quorum.map((n) => ({ id: n.id, controllerPort: n.controllerPort }));
  const text = kafkaNodeProperties(readFileSync(s.kafkaTemplate, 'utf8'), {
    nodeId: node.id,
    role: node.role,
    kafkaPort: node.port,
    controllerPort: node.controllerPort,
    dataDir: node.dataDir,
    voters,
    brokers: s.kafkaNodes.length,
  });
  mkdirSync(dirname(node.configFile), { recursive: true });
  writeFileSync(node.configFile, text);
  return node.configFile;
}

function javaArgs(s, node, mainClass, args) {
  return [
    `-Xmx${s.kafkaHeap}`,
    '-Xms256m',
    '-XX:+UseG1GC',
    // BANSTREAM_KAFKA_JIT (settings.mjs): C1 alone on a cluster of JVMs sharing one machine.
    ...(s.kafkaJit === 'quick' ? ['-XX:TieredStopAtLevel=1'] : []),
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${s.kafkaLog4j}`,
    `-Dkafka.logs.dir=${node.logs}`,
    // The stack folder on the command line lets `down` recognise its own process.
    `-Dbanstream.stack=${s.dir}`,
    `-Dbanstream.kafka.node=${node.id}`,
    '-cp',
    `${s.kafkaLibs}/*`,
    mainClass,
    ...args,
  ];
}

/** Every node of a cluster is formatted with the same cluster id, kept next to their folders. */
function clusterId(s, node) {
  const fresh = () => {
    // A base64url id may start with '-', which the tool would read as an option
    // (Kafka's own Uuid.randomUuid redraws those too).
    let id;
    do id = Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64url');
    while (id.startsWith('-'));
    return id;
  };
  if (allNodes(s).length === 1) return fresh();
  const file = join(dirname(node.dataDir), 'cluster-id');
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${fresh()}\n`);
  }
  return readFileSync(file, 'utf8').trim();
}

function formatStorage(s, node, config) {
  if (existsSync(join(node.dataDir, 'meta.properties'))) return;
  mkdirSync(node.dataDir, { recursive: true });
  execFileSync('java', javaArgs(s, node, 'kafka.tools.StorageTool', ['format', '--ignore-formatted', '-t', clusterId(s, node), '-c', config]), { stdio: ['ignore', 'ignore', 'inherit'] });
}

function nodeById(s, id) {
  const node = allNodes(s).find((n) => n.id === id);
  if (!node)
    throw new StackError(
      `no Kafka node ${id} in this stack (nodes ${allNodes(s)
        .map((n) => n.id)
        .join(', ')})`,
    );
  return node;
}

const nodeRuns = (s, node) => isOurProcess(readPid(node.pidFile), s.dir);

/** Pid files of this stack folder's Kafka nodes, whatever layout started them. */
function kafkaPidFiles(s) {
  if (!existsSync(s.dir)) return [];
  return readdirSync(s.dir)
    .filter((f) => /^kafka(-broker|-controller)?(-\d+)?\.pid$/.test(f))
    .map((f) => join(s.dir, f));
}

/** Refuses to start one node where a cluster runs (or the reverse): they would share ports. */
function refuseOtherLayout(s) {
  const ours = new Set(allNodes(s).map((n) => n.pidFile));
  const other = kafkaPidFiles(s).filter((f) => !ours.has(f) && isOurProcess(readPid(f), s.dir));
  if (other.length > 0) {
    throw new StackError(
      `${s.dir} already runs Kafka with another number of nodes (${other.map((f) => basename(f)).join(', ')}): run npm run stack:down first, then stack:up with the number you want`,
    );
  }
}

async function spawnNode(s, node, log) {
  for (const port of [node.port, node.controllerPort].filter((p) => p !== undefined)) {
    if (await portAnswers(port)) throw new StackError(`port ${port} is in use by another process: stop it or choose other ports with BANSTREAM_KAFKA_PORT / BANSTREAM_KAFKA_CONTROLLER_PORT.`);
  }
  mkdirSync(node.logs, { recursive: true });
  const config = writeServerProperties(s, node);
  formatStorage(s, node, config);
  const out = openSync(join(node.logs, 'kafka.out'), 'a');
  const child = spawn('java', javaArgs(s, node, 'kafka.Kafka', [config]), { detached: true, stdio: ['ignore', out, out] });
  child.unref();
  writePid(node.pidFile, child.pid);
  const where = node.role === 'controller' ? `controller on 127.0.0.1:${node.controllerPort}` : `on 127.0.0.1:${node.port}`;
  log(`kafka${allNodes(s).length > 1 ? ` node ${node.id}` : ''}: started (pid ${child.pid}) ${where}, logs in ${node.logs}`);
}

function nodeExited(node) {
  return new StackError(`kafka node ${node.id} exited during start-up:\n${tail(join(node.logs, 'kafka.out'))}\n${tail(join(node.logs, 'server.log'))}`);
}

/** Starts every node that is not running and waits until the whole cluster answers. */
export async function startKafka(s, log = console.log) {
  refuseOtherLayout(s);
  const toStart = allNodes(s).filter((n) => {
    if (!nodeRuns(s, n)) return true;
    log(`kafka${allNodes(s).length > 1 ? ` node ${n.id}` : ''}: already running (pid ${readPid(n.pidFile)})`);
    return false;
  });
  if (toStart.length > 0) {
    requireJava();
    fetchKafka(s, log);
    // All at once: a cluster's brokers register only once a quorum of controllers runs
    // (dedicated controllers first, so the brokers do not wait for them to start).
    const controllersFirst = [...toStart].sort((a, b) => Number(b.role === 'controller') - Number(a.role === 'controller'));
    for (const node of controllersFirst) await spawnNode(s, node, log);
  }
  await waitFor(
    async () => {
      for (const node of allNodes(s)) if (!nodeRuns(s, node)) throw nodeExited(node);
      const counts = await Promise.all(s.kafkaNodes.map((n) => registeredBrokers(`127.0.0.1:${n.port}`)));
      return counts.every((c) => c === s.kafkaNodes.length);
    },
    {
      timeoutMs: 90_000,
      intervalMs: 300,
      message: () => `kafka did not answer on ${s.kafkaBrokers} with ${s.kafkaNodes.length} broker(s) within 90 s:\n${tail(join(s.kafkaNodes[0].logs, 'server.log'))}`,
    },
  );
}

/** Starts one node of the stack again (after stopKafkaNode) and waits until it answers. */
export async function startKafkaNode(s, id, log = console.log) {
  const node = nodeById(s, id);
  if (!nodeRuns(s, node)) {
    requireJava();
    await spawnNode(s, node, log);
  }
  await waitFor(
    async () => {
      if (!nodeRuns(s, node)) throw nodeExited(node);
      if (node.role === 'controller') return portAnswers(node.controllerPort);
      return (await registeredBrokers(`127.0.0.1:${node.port}`)) > 0;
    },
    { timeoutMs: 90_000, intervalMs: 200, message: () => `kafka node ${id} did not answer on 127.0.0.1:${node.port ?? node.controllerPort} within 90 s:\n${tail(join(node.logs, 'server.log'))}` },
  );
}

/**
 * Stops one node: 'SIGTERM' is a clean shutdown (killed past 20 s), 'SIGKILL' a crash.
 * Resolves once the process is gone.
 */
export async function stopKafkaNode(s, id, signal = 'SIGTERM') {
  const node = nodeById(s, id);
  const pid = readPid(node.pidFile);
  if (!isOurProcess(pid, s.dir)) return 'not running';
  if (signal === 'SIGKILL') {
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !isAlive(pid), { timeoutMs: 10_000, intervalMs: 20, message: `kafka node ${id} (pid ${pid}) outlived SIGKILL by 10 s` });
    return 'killed';
  }
  return stopProcess(pid, { graceMs: 20_000 });
}

/** The pid of a running node, or undefined. */
export function kafkaNodePid(s, id) {
  const node = nodeById(s, id);
  return nodeRuns(s, node) ? readPid(node.pidFile) : undefined;
}

/** How many brokers the cluster's metadata lists, asked of one address; 0 when it does not answer. */
async function registeredBrokers(address) {
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  if (!(await portAnswers(port))) return 0;
  const { Kafka, logLevel } = await import('kafkajs');
  const admin = new Kafka({ clientId: 'banstream-stack', brokers: [address], logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 1000, requestTimeout: 2000 }).admin();
  try {
    await admin.connect();
    return (await admin.describeCluster()).brokers.length;
  } catch {
    return 0;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Stops every Kafka node of the stack folder, whatever layout started them. */
export async function stopKafka(s) {
  const files = [...new Set([...allNodes(s).map((n) => n.pidFile), ...kafkaPidFiles(s)])];
  // A clean broker shutdown takes a few seconds; past 20 s it is killed.
  const results = await Promise.all(files.map((f) => stopOwnedProcess(f, s.dir, 20_000)));
  const acted = results.filter((r) => r !== 'not running');
  if (acted.length === 0) return 'not running';
  return acted.length === 1 ? acted[0] : `${acted.length} nodes ${[...new Set(acted)].join('/')}`;
}

/** The address a running node advertises, read from the properties file on its command line. */
function advertised(pid) {
  try {
    const config = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).at(-1);
    return /^advertised\.listeners=(?:PLAINTEXT|CONTROLLER):\/\/(.+)$/m.exec(readFileSync(config, 'utf8'))?.[1] ?? 'an unknown address';
  } catch {
    return 'an unknown address';
  }
}

/**
 * What runs: `running (pid N) at ADDRESS` for one node; for a cluster `running 3 nodes: ...`,
 * `partly running (2 of 3 nodes): ...` or `stopped`. A node of another layout in this
 * folder (a `status` without --brokers while a cluster runs) is shown too.
 */
export function kafkaStatus(s) {
  const configured = allNodes(s).map((n) => n.pidFile);
  const runs = (f) => isOurProcess(readPid(f), s.dir);
  const others = kafkaPidFiles(s).filter((f) => !configured.includes(f) && runs(f));
  const files = others.length > 0 && !configured.some(runs) ? others : configured;
  if (files.length === 1) return ownedProcessStatus(files[0], s.dir, basename(files[0]) === 'kafka.pid' ? `127.0.0.1:${s.kafkaPort}` : basename(files[0]));
  const up = files.filter(runs).length;
  if (up === 0) return 'stopped';
  const nodes = files
    .map((f) => {
      const node = allNodes(s).find((n) => n.pidFile === f);
      const [, role, number] = /kafka-(?:(broker|controller)-)?(\d+)\.pid$/.exec(f) ?? [];
      const name = role === 'controller' ? `controller ${node?.id ?? number}` : `${role ?? 'node'} ${number}`;
      const address = node ? `127.0.0.1:${node.port ?? node.controllerPort}` : advertised(readPid(f));
      return runs(f) ? `${name} (pid ${readPid(f)}) at ${address}` : `${name} stopped`;
    })
    .join('; ');
  return up === files.length ? `running ${up} nodes: ${nodes}` : `partly running (${up} of ${files.length} nodes): ${nodes}`;
}
