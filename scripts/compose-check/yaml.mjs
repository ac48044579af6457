// The optional `yaml` package, and reading a YAML file the way Compose does.
import { readFileSync } from 'node:fs';

/** The `yaml` package, or undefined when it is not installed (before `npm ci`). */
export async function loadYaml() {
  try {
    return (await import('yaml')).default;
  } catch {
    return undefined;
  }
}

/**
 * A reader `(file, label) => [value, problems]` that parses YAML with merge keys
 * (`<<: *anchor`), as Compose does. value is undefined when the file cannot be used.
 */
export function yamlReader(YAML, rel) {
  return (file, label) => {
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      return [undefined, [`${label}: cannot read ${rel(file)}: ${e.message}`]];
    }
    const doc = YAML.parseDocument(text, { merge: true, uniqueKeys: true, prettyErrors: true });
    if (doc.errors.length > 0) {
      // The first error is the real one; the rest usually follow from it.
      const more = doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more)` : '';
      return [undefined, [`${label}: YAML error in ${rel(file)}${more}: ${doc.errors[0].message.trim()}`]];
    }
    return [doc.toJS({ maxAliasCount: 10_000 }), []];
  };
}
