/** Errors that carry their HTTP status; the one error handler turns them into `{"detail": ...}`. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    /** Extra members merged into the response body beside `detail`. */
    readonly extra?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export class BadRequestError extends HttpError {
  constructor(message: string, extra?: Record<string, unknown>) {
    super(400, 'bad_request', message, extra);
  }
}

export class UnauthorizedError extends HttpError {
  constructor(message = 'Not authenticated') {
    super(401, 'unauthorized', message, undefined, { 'WWW-Authenticate': 'Bearer' });
  }
}

export class ForbiddenError extends HttpError {
  constructor(message: string) {
    super(403, 'forbidden', message);
  }
}

export class NotFoundError extends HttpError {
  constructor(message: string) {
    super(404, 'not_found', message);
  }

  /** `Project 42 not found`. */
  static of(kind: string, id: number | string): NotFoundError {
    return new NotFoundError(`${kind} ${id} not found`);
  }
}

export class ConflictError extends HttpError {
  constructor(message: string, extra?: Record<string, unknown>) {
    super(409, 'conflict', message, extra);
  }
}

export class PayloadTooLargeError extends HttpError {
  constructor(message: string) {
    super(413, 'payload_too_large', message);
  }
}

export class UnsupportedMediaError extends HttpError {
  constructor(message: string) {
    super(415, 'unsupported_media_type', message);
  }
}

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** 422 with a FastAPI-style list of issues. */
export class ValidationError extends HttpError {
  constructor(readonly issues: ValidationIssue[]) {
    super(422, 'validation_error', issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
  }

  static at(loc: (string | number)[], msg: string, type = 'value_error'): ValidationError {
    return new ValidationError([{ loc, msg, type }]);
  }
}

export class TooManyRequestsError extends HttpError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, 'too_many_requests', message, undefined, { 'Retry-After': String(retryAfterSeconds) });
  }
}

export class ServiceUnavailableError extends HttpError {
  constructor(message: string, retryAfterSeconds?: number, extra?: Record<string, unknown>) {
    super(503, 'service_unavailable', message, extra, retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : undefined);
  }
}
