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

/** The values an `enum` or `const` error allows (a nullable enum's `type: null` branch allows null). */
function allowedValues(e: AjvIssue): unknown[] {
  if (e.keyword === 'enum') return (e.params.allowedValues as unknown[] | undefined) ?? [];
  if (e.keyword === 'const') return [e.params.allowedValue];
  if (e.keyword === 'type' && e.params.type === 'null') return [null];
  return [];
}

/** `must be one of a, b, c`: the allowed values as a client would type them (strings bare, others as JSON). */
function oneOfMessage(values: unknown[]): string {
  const shown = values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return shown.length === 1 ? `must be ${shown[0]}` : `must be one of ${shown.join(', ')}`;
}

/**
 * Ajv's errors as FastAPI's `detail` list: `{loc: ["body", "project_type"], msg, type}`. A value outside an enum or a
 * union of literals names the values allowed there (`must be one of bbox, polygon, …`), gathered over every branch
 * Ajv reports at that location.
 */
export function toValidationIssues(context: string, errors: AjvIssue[]): ValidationIssue[] {
  const byLoc = new Map<string, { loc: (string | number)[]; errors: AjvIssue[] }>();
  for (const e of errors) {
    const path = e.instancePath.split('/').filter(Boolean).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
    if (e.keyword === 'required') path.push(String(e.params.missingProperty));
    if (e.keyword === 'additionalProperties') path.push(String(e.params.additionalProperty));
    const loc = [CONTEXT_TO_LOC[context] ?? context, ...path];
    const key = JSON.stringify(loc);
    const entry = byLoc.get(key) ?? { loc, errors: [] };
    entry.errors.push(e);
    byLoc.set(key, entry);
  }
  const issues: ValidationIssue[] = [];
  for (const { loc, errors: here } of byLoc.values()) {
    const literal = here.some((e) => e.keyword === 'enum' || e.keyword === 'const');
    if (literal) {
      const values = [...new Map(here.flatMap(allowedValues).map((v) => [JSON.stringify(v), v])).values()];
      // A literal beside another kind of value (`"auto"` or an integer) says the other kind too.
      const other = here.find((e) => !['enum', 'const', 'anyOf', 'oneOf'].includes(e.keyword) && allowedValues(e).length === 0);
      issues.push({ loc, msg: other ? `${oneOfMessage(values)}, or ${other.message ?? 'another value'}` : oneOfMessage(values), type: 'enum' });
      continue;
    }
    // anyOf/union schemas report one error per branch; the first per location says enough.
    const e = here[0]!;
    issues.push({ loc, msg: e.keyword === 'required' ? 'Field required' : (e.message ?? 'Invalid value'), type: e.keyword });
  }
  return issues;
}

/**
 * Errors of the connection before a request exists (a body cut off, a malformed request line): Node's HTTP server
 * reports them to this handler, which answers in the API's `{detail}` shape instead of Fastify's `{error, message}`.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: import('node:net').Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify({ detail: status === 408 ? 'Request timed out' : status === 431 ? 'Request headers too large' : 'Malformed or incomplete request' });
  socket.end(
    `HTTP/1.1 ${status} ${status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { validationContext?: string }, request, reply) => {
    // A download route may have named its file before the error: the answer is JSON, not that file.
    reply.removeHeader('content-disposition').removeHeader('content-length').type('application/json; charset=utf-8');
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
    // A body the client stopped sending: there is no one to answer, but the answer keeps the API's shape.
    if ((error as { code?: string }).code === 'ECONNRESET' || error.message === 'aborted') {
      return reply.status(400).send({ detail: 'The request body was cut off before it ended' });
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
