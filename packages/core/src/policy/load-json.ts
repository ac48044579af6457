/**
 * Where a JSON text goes wrong. V8's JSON.parse omits the position for some errors
 * ("Unexpected token '}', … is not valid JSON", with the whole text quoted) and
 * silently keeps the last of two equal keys, which YAML rejects; this scanner gives
 * both formats the same strictness and a line and column for every syntax error.
 */

export interface JsonProblem {
  /** 0-based offset into the text. */
  readonly offset: number;
  readonly message: string;
}

/** Deeper than any policy document; keeps the recursive scan far from the stack limit. */
const MAX_DEPTH = 128;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/** Thrown inside the scan only, to unwind the recursion in one step. */
class Stop extends Error {
  constructor(readonly problem: JsonProblem) {
    super(problem.message);
  }
}

/** The first syntax error or duplicate key, or undefined when JSON.parse will accept the text. */
export function findJsonProblem(text: string): JsonProblem | undefined {
  let i = 0;
  const fail = (message: string, at = i): never => {
    throw new Stop({ offset: at, message });
  };
  const describe = () => (i >= text.length ? 'unexpected end of input' : `unexpected ${JSON.stringify(text[i])}`);
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const expect = (c: string, what: string) => {
    ws();
    if (text[i] !== c) fail(`${describe()}, expected ${what}`);
    i++;
  };
  const string = (): string => {
    const start = i;
    for (i++; text[i] !== '"'; ) {
      if (i >= text.length) fail('unterminated string', start);
      if (text.charCodeAt(i) < 0x20) fail('control character in string (escape it)');
      if (text[i] !== '\\') i++;
      else {
        ESCAPE.lastIndex = i;
        if (ESCAPE.exec(text) === null) fail('invalid escape in string');
        i = ESCAPE.lastIndex;
      }
    }
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (depth: number): void => {
    ws();
    if (depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH} levels`);
    const c = text[i];
    if (c === '{') {
      i++;
      const keys = new Set<string>();
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`${describe()}, expected a double-quoted property name`);
        const keyAt = i;
        const key = string();
        if (keys.has(key)) fail(`duplicate key ${JSON.stringify(key)}`, keyAt);
        keys.add(key);
        expect(':', "':' after the property name");
        value(depth + 1);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail(`${describe()}, expected ',' or '}'`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail(`${describe()}, expected ',' or ']'`);
      }
    }
    if (c === '"') return void string();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) return void (i += word.length);
    }
    NUMBER.lastIndex = i;
    if (NUMBER.exec(text) !== null) return void (i = NUMBER.lastIndex);
    fail(`${describe()}, expected a value`);
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail(`${describe()} after the end of the document`);
    return undefined;
  } catch (err) {
    if (err instanceof Stop) return err.problem;
    throw err;
  }
}

/** 1-based line and column of a 0-based offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
