import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { authRoutes } from './auth.routes.js';
import { AuthService } from './auth.service.js';

/** Accounts, sessions and API tokens; offers the authenticator the `/api` authentication hook resolves callers with. */
export function registerAuthModule(app: FastifyInstance, deps: ModuleDeps): AuthService {
  const auth = new AuthService(deps.db, deps.config.authAttemptsPerMinute);
  authRoutes(app, auth);
  return auth;
}
