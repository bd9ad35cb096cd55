import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { authRoutes } from './auth.routes.js';
import { AuthService } from './auth.service.js';
import type { LoginClock } from './login-throttle.service.js';

/**
 * Accounts, sessions and API tokens; offers the authenticator the `/api` authentication hook resolves callers with.
 * `loginClock` times the login throttle (tests pass a fake one).
 */
export function registerAuthModule(app: FastifyInstance, deps: ModuleDeps, loginClock?: LoginClock): AuthService {
  const auth = new AuthService(deps.db, deps.config.authAttemptsPerMinute, loginClock);
  authRoutes(app, auth);
  return auth;
}
