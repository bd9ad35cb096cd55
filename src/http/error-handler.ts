import type { FastifyError, FastifyInstance } from 'fastify';
import { DatabaseConflictError } from '../db/errors.js';
import { HttpError, ValidationError, type ValidationIssue } from './errors.js';

const CONTEXT_TO_LOC: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Ajv's errors as FastAPI's `detail` list: `{loc: ["body", "project_type"], msg, type}`. */
export function toValidationIssues(context: string, errors: AjvIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const e of errors) {
    const path = e.instancePath.split('/').filter(Boolean).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
    if (e.keyword === 'required') path.push(String(e.params.missingProperty));
    if (e.keyword === 'additionalProperties') path.push(String(e.params.additionalProperty));
    const loc = [CONTEXT_TO_LOC[context] ?? context, ...path];
    const key = loc.join('\u0000');
    // anyOf/union schemas report one error per branch; the first per location says enough.
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ loc, msg: e.keyword === 'required' ? 'Field required' : (e.message ?? 'Invalid value'), type: e.keyword });
  }
  return issues;
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { validationContext?: string }, request, reply) => {
    if (error.validation) {
      const issues = toValidationIssues(error.validationContext ?? 'body', error.validation as AjvIssue[]);
      return reply.status(422).send({ detail: issues });
    }
    if (error instanceof ValidationError) {
      return reply.status(422).send({ detail: error.issues });
    }
    if (error instanceof HttpError) {
      if (error.headers) reply.headers(error.headers);
      return reply.status(error.statusCode).send({ detail: error.message, ...error.extra });
    }
    // A constraint failure no service worded: another request changed the same rows at the same time.
    if (error instanceof DatabaseConflictError) {
      request.log.info({ err: error }, 'unhandled database conflict');
      return reply.status(409).send({ detail: 'The change conflicts with another one made at the same time; try again' });
    }
    // Fastify's own client errors (malformed JSON, bad content type, body too large…) keep their 4xx status.
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.status(status).send({ detail: error.message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send({ detail: 'Internal server error' });
  });

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send({ detail: `Route ${request.method} ${request.url.split('?')[0]} not found` });
  });
}
