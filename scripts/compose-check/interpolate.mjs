// Compose interpolation: $$ is a literal $, ${VAR:-d} / ${VAR-d} take the default,
// ${VAR:?msg} / ${VAR?msg} and bare ${VAR} / $VAR need the variable set. Defaults
// only, never the caller's environment, so the result is the same on every
// machine; a variable with no default is reported.
import { isMap } from './model.mjs';

/** Interpolates a parsed compose file; `x-` extension fields are left as written. Returns [compose, problems]. */
export function interpolateCompose(raw) {
  const problems = [];
  const compose = {};
  for (const [k, v] of Object.entries(raw)) compose[k] = k.startsWith('x-') ? v : interpolate(v, k, problems);
  return [compose, problems];
}

function interpolate(value, where, problems) {
  if (typeof value === 'string') {
    return value.replace(/\$(\$|\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (match, all, braced, bare) => {
      if (all === '$') return '$';
      const expr = braced ?? bare;
      const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])(.*))?$/s.exec(expr);
      if (!m) {
        problems.push(`${where}: invalid interpolation ${match}`);
        return '';
      }
      const [, name, op, arg] = m;
      if (op === ':-' || op === '-') return interpolate(arg, where, problems);
      if (op === ':+' || op === '+') return ''; // the variable is unset under "defaults only"
      problems.push(`${where}: \${${name}} has no default; the stack must start with no .env file (use \${${name}:-value})`);
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, `${where}[${i}]`, problems));
  if (isMap(value)) {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = k.startsWith('x-') ? v : interpolate(v, `${where}.${k}`, problems);
    return out;
  }
  return value;
}
