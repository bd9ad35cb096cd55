import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationError, type ValidationIssue } from './errors.js';

/** Fields that name or identify something: no control characters at all (they break exports, logs and XML). */
const NAME_FIELDS = new Set(['name', 'email', 'class_name', 'new_name', 'names', 'classes']);
const CONTROL = /[\u0000-\u001f\u007f]/;
const MAX_DEPTH = 64;

/**
 * Refuses (422, both databases alike) what the schemas cannot express and the databases treat differently: a NUL
 * byte in any string of a JSON body, query or path (PostgreSQL cannot store one), control characters in names and
 * e-mail addresses, and numbers that overflowed to Infinity (`1e999`, which would otherwise become the text
 * "Infinity" where a string is coerced).
 */
export function registerInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request: FastifyRequest) => {
    const issues: ValidationIssue[] = [];
    inspect(request.body, ['body'], false, issues, 0);
    inspect(request.query, ['query'], false, issues, 0);
    inspect(request.params, ['path'], false, issues, 0);
    if (issues.length > 0) throw new ValidationError(issues);
  });
}

/** A problem with a text a user gave (for fields read outside JSON bodies, such as multipart text parts). */
export function textProblem(value: string, isName: boolean): string | null {
  if (value.includes('\u0000')) return 'must not contain a NUL character';
  if (isName && CONTROL.test(value)) return 'must not contain control characters';
  return null;
}

function inspect(value: unknown, loc: (string | number)[], isName: boolean, issues: ValidationIssue[], depth: number): void {
  if (issues.length >= 20 || depth > MAX_DEPTH) return;
  if (typeof value === 'string') {
    const problem = textProblem(value, isName);
    if (problem) issues.push({ loc, msg: `String ${problem}`, type: 'string_pattern_mismatch' });
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) issues.push({ loc, msg: 'Number out of range', type: 'finite_number' });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => inspect(item, [...loc, i], isName, issues, depth + 1));
  } else if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) issues.push({ loc: [...loc, key], msg: 'Key must not contain a NUL character', type: 'string_pattern_mismatch' });
      inspect(item, [...loc, key], isName || NAME_FIELDS.has(key), issues, depth + 1);
    }
  }
}
