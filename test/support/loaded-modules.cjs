// Preloaded by a test (NODE_OPTIONS=--require): on exit, each process of a service appends
// which of the heavy libraries it had loaded to LOADED_MODULES_REPORT, one JSON line.
const { appendFileSync } = require('node:fs');
const cluster = require('node:cluster');

process.on('exit', () => {
  const loaded = new Set();
  for (const path of Object.keys(require.cache)) {
    const library = /\/node_modules\/(kafkajs|avsc|ioredis)\//.exec(path)?.[1];
    if (library) loaded.add(library);
  }
  appendFileSync(process.env.LOADED_MODULES_REPORT, `${JSON.stringify({ pid: process.pid, primary: cluster.isPrimary, loaded: [...loaded].sort() })}\n`);
});
