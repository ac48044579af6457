#!/usr/bin/env node
// The `banstream` command. This small file is committed (not built), so npm links the
// command at install time even before `npm run build`; the code itself is in dist/.
try {
  await import('../dist/main.js');
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('cli/dist/main.js')) {
    process.stderr.write('banstream: the CLI is not built yet: run `npm run build` first\n');
    process.exit(2);
  }
  throw error;
}
