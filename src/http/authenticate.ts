import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller } from './caller.js';
import { ForbiddenError, UnauthorizedError } from './errors.js';

export const SESSION_COOKIE = 'versa_session';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    /** Routes that answer without credentials (health, login, register, docs). */
    public?: boolean;
  }
}

/**
 * Resolves a bearer token or session cookie to its caller (null when unknown, expired or revoked). Owned by this
 * layer; the auth module implements it, so src/http never imports a module.
 */
export interface Authenticator {
  authenticate(secret: string, via: Caller['via']): Promise<Caller | null>;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Resolves the caller of every `/api` route from `Authorization: Bearer …` or the session cookie, before the body
 * is read. Cookie-authenticated writes must come from this site: browsers send `Sec-Fetch-Site`/`Origin`, and a
 * cross-site value is refused, so a page elsewhere cannot ride on the cookie.
 */
export function registerAuthentication(app: FastifyInstance, auth: Authenticator): void {
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/api/') || request.routeOptions.config?.public) return;
    await authenticateRequest(request, auth);
  });
}

/** Sets `request.caller` from its bearer token or session cookie, or throws 401 (403 for a refused write). */
export async function authenticateRequest(request: FastifyRequest, auth: Authenticator): Promise<void> {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    request.caller = match ? await auth.authenticate(match[1], 'bearer') : null;
    if (!request.caller) throw new UnauthorizedError('Invalid or expired token');
    if (request.caller.scope === 'read-only' && !SAFE_METHODS.has(request.method)) {
      throw new ForbiddenError('This API token is read-only');
    }
    return;
  }
  const cookie = request.cookies?.[SESSION_COOKIE];
  if (!cookie) throw new UnauthorizedError('Not authenticated');
  request.caller = await auth.authenticate(cookie, 'cookie');
  if (!request.caller) throw new UnauthorizedError('Session expired; log in again');
  if (!SAFE_METHODS.has(request.method)) assertSameSite(request);
}

function assertSameSite(request: FastifyRequest): void {
  const fetchSite = request.headers['sec-fetch-site'];
  if (fetchSite && fetchSite !== 'same-origin' && fetchSite !== 'none') {
    throw new ForbiddenError('Cross-site request refused');
  }
  const origin = request.headers.origin;
  if (origin && origin !== 'null') {
    let same = false;
    try {
      // Scheme, host and port: http://site is another origin than https://site (a network attacker can serve it).
      same = new URL(origin).origin === new URL(`${request.protocol}://${request.headers.host}`).origin;
    } catch {
      // An unparsable Origin or Host is treated as cross-site.
    }
    if (!same) throw new ForbiddenError('Cross-site request refused');
  } else if (origin === 'null') {
    throw new ForbiddenError('Cross-site request refused');
  }
}

/** The authenticated caller of a route that is not public. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new UnauthorizedError();
  return request.caller;
}
