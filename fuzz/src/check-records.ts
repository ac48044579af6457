import { isBanstreamError } from '@banstream/core';
import { difference } from './equal.js';
import type { Probe } from './probe.js';
import { decodeSingleObject, Refused, resolve } from './reference.js';
import type { Sut } from './sut.js';

/**
 * A record of another type (bans, counts, policies…): the catalog's codec (avsc with
 * the guard, any writer version into the newest shape) against the reference.
 */
export function checkRecord(sut: Sut, name: string, bytes: Buffer, probe: Probe): void {
  const reader = `catalog.codec:${name}`;
  const { version, node } = sut.latest.get(name)!;
  const ref = probe.run('reference', () => {
    const { writer, value } = decodeSingleObject(sut.writers, name, bytes);
    return resolve(writer.node, node, value);
  });
  if (ref.ok) probe.accepted('reference');
  else if (!(ref.error instanceof Refused)) return probe.fail('reference', 'crashes', `threw ${String(ref.error)}`);

  const answer = probe.run(reader, () => sut.catalog.codec(name).decode(bytes));
  if (!answer.ok && !(isBanstreamError(answer.error) && answer.error.code.startsWith('SCHEMA_'))) {
    return probe.fail(reader, 'crashes', `threw ${answer.error instanceof Error ? answer.error.message : String(answer.error)}`);
  }
  if (answer.ok) {
    probe.accepted(reader);
    if (!version.type.isValid(answer.value)) probe.fail(reader, 'crashes', 'decoded a value its schema calls invalid');
  }
  if (answer.ok !== ref.ok) {
    const detail = ref.ok ? `refused what the reference accepts: ${(answer as { error: Error }).error.message}` : `accepted what the reference refuses (${(ref.error as Error).message})`;
    return probe.fail(reader, 'disagreements', detail);
  }
  if (answer.ok && ref.ok) {
    const at = difference(answer.value, ref.value);
    if (at) probe.fail(reader, 'disagreements', `decodes otherwise than the reference at ${at}`);
  }
}
