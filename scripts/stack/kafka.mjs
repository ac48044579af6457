// The real Apache Kafka broker, fetched from Maven Central and run in KRaft mode
// on the machine's Java, with its own ports, data folder and logs.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StackError, isOurProcess, ownedProcessStatus, portAnswers, readPid, stopOwnedProcess, tail, waitFor, which, writePid } from './processes.mjs';

const pidFile = (s) => join(s.dir, 'kafka.pid');

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

function writeServerProperties(s) {
  // biome-ignore-start lint/suspicious/noTemplateCurlyInString: the template's own ${NAME} placeholders
  const text = readFileSync(s.kafkaTemplate, 'utf8').replaceAll('${KAFKA_PORT}', String(s.kafkaPort)).replaceAll('${CONTROLLER_PORT}', String(s.controllerPort)).replaceAll('${DATA_DIR}', s.kafkaData);
  // biome-ignore-end lint/suspicious/noTemplateCurlyInString: placeholders end
  const file = join(s.dir, 'kafka-server.properties');
  writeFileSync(file, text);
  return file;
}

function javaArgs(s, mainClass, args) {
  return [
    `-Xmx${s.kafkaHeap}`,
    '-Xms256m',
    '-XX:+UseG1GC',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${s.kafkaLog4j}`,
    `-Dkafka.logs.dir=${s.logs}`,
    // The stack folder on the command line lets `down` recognise its own process.
    `-Dbanstream.stack=${s.dir}`,
    '-cp',
    `${s.kafkaLibs}/*`,
    mainClass,
    ...args,
  ];
}

function formatStorage(s, config) {
  if (existsSync(join(s.kafkaData, 'meta.properties'))) return;
  mkdirSync(s.kafkaData, { recursive: true });
  // A base64url id may start with '-', which the tool would read as an option
  // (Kafka's own Uuid.randomUuid redraws those too).
  let clusterId;
  do clusterId = Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64url');
  while (clusterId.startsWith('-'));
  execFileSync('java', javaArgs(s, 'kafka.tools.StorageTool', ['format', '--ignore-formatted', '-t', clusterId, '-c', config]), { stdio: ['ignore', 'ignore', 'inherit'] });
}

export async function startKafka(s, log = console.log) {
  if (isOurProcess(readPid(pidFile(s)), s.dir)) {
    log(`kafka: already running (pid ${readPid(pidFile(s))})`);
  } else {
    for (const port of [s.kafkaPort, s.controllerPort]) {
      if (await portAnswers(port)) throw new StackError(`port ${port} is in use by another process: stop it or choose other ports with BANSTREAM_KAFKA_PORT / BANSTREAM_KAFKA_CONTROLLER_PORT.`);
    }
    requireJava();
    fetchKafka(s, log);
    mkdirSync(s.logs, { recursive: true });
    const config = writeServerProperties(s);
    formatStorage(s, config);
    const out = openSync(join(s.logs, 'kafka.out'), 'a');
    const child = spawn('java', javaArgs(s, 'kafka.Kafka', [config]), { detached: true, stdio: ['ignore', out, out] });
    child.unref();
    writePid(pidFile(s), child.pid);
    log(`kafka: started (pid ${child.pid}), logs in ${s.logs}`);
  }
  await waitFor(
    async () => {
      if (!isOurProcess(readPid(pidFile(s)), s.dir)) throw new StackError(`kafka exited during start-up:\n${tail(join(s.logs, 'kafka.out'))}\n${tail(join(s.logs, 'server.log'))}`);
      return kafkaAnswers(s);
    },
    { timeoutMs: 90_000, intervalMs: 300, message: () => `kafka did not answer on ${s.kafkaBrokers} within 90 s:\n${tail(join(s.logs, 'server.log'))}` },
  );
}

/** Answers when a metadata request succeeds, not merely when the port is open. */
async function kafkaAnswers(s) {
  if (!(await portAnswers(s.kafkaPort))) return false;
  const { Kafka, logLevel } = await import('kafkajs');
  const admin = new Kafka({ clientId: 'banstream-stack', brokers: [s.kafkaBrokers], logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 1000, requestTimeout: 2000 }).admin();
  try {
    await admin.connect();
    await admin.describeCluster();
    return true;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

export function stopKafka(s) {
  // A clean broker shutdown takes a few seconds; past 20 s it is killed.
  return stopOwnedProcess(pidFile(s), s.dir, 20_000);
}

export function kafkaStatus(s) {
  return ownedProcessStatus(pidFile(s), s.dir, s.kafkaBrokers);
}
