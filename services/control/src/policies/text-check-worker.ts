import { parentPort } from 'node:worker_threads';
import { checkPolicyText } from './text-check.js';

// The worker side of TextChecker: parses and validates one text per message, off control's event loop.
parentPort?.on('message', (message: { id: number; text: string }) => {
  parentPort!.postMessage({ id: message.id, result: checkPolicyText(message.text) });
});
