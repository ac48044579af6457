#!/usr/bin/env node
// `npm run stop`: stops a running `npm start` (its services, then the stack it
// started) and then the local stack in any case, so nothing is left behind.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stackDown, stackSettings } from './stack/index.mjs';

const settings = stackSettings();
const runFile = join(settings.dir, 'run.json');
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// Pids get reused: only kill a process that is still one of our services.
const isOurService = (pid) => alive(pid) && /services\/\w+\/dist\/main\.js/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));

if (existsSync(runFile)) {
  const { pid, services } = JSON.parse(readFileSync(runFile, 'utf8'));
  if (alive(pid)) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 40_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  }
  // If the runner itself was killed hard, its services may still run.
  for (const servicePid of Object.values(services)) if (isOurService(servicePid)) process.kill(servicePid, 'SIGKILL');
}
const result = await stackDown(settings);
console.log(`services: stopped\nkafka: ${result.kafka}\nredis: ${result.redis}`);
