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
 * "Infinity" where a string is coerced). The same rule reaches the other ways a string enters through `textProblem`
 * and `inputIssues`: multipart parts (`multipart.ts`), pipeline YAML, and the records of sample import files.
 */
export function registerInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request: FastifyRequest) => {
    const issues = [...inputIssues(request.body, ['body']), ...inputIssues(request.query, ['query']), ...inputIssues(request.params, ['path'])];
    if (issues.length > 0) throw new ValidationError(issues);
  });
}

/**
 * The one rule for a string a user gives, however it arrives: never a NUL; in a name, no control character either
 * (free text such as a description or a document keeps its tabs and line breaks). Null when the text is fine.
 */
export function textProblem(value: string, isName: boolean): string | null {
  if (value.includes('\u0000')) return 'must not contain a NUL character';
  if (isName && CONTROL.test(value)) return 'must not contain control characters';
  return null;
}

/** Whether a member (a JSON key, a multipart part) of this name holds names, so that the name rule applies to it. */
export function isNameField(key: string): boolean {
  return NAME_FIELDS.has(key);
}

/** The rule applied to every string, key and number inside a value read from a body or a file, each issue at its `loc`. */
export function inputIssues(value: unknown, loc: (string | number)[], isName = false): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  inspect(value, loc, isName, issues, 0);
  return issues;
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
