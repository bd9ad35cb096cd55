import type { FastifyInstance } from 'fastify';
import type { MembersRepository } from '../members/members.repository.js';
import type { ModuleDeps } from '../module-deps.js';
import { OrgsRepository } from './orgs.repository.js';
import { orgsRoutes } from './orgs.routes.js';
import { OrgsService } from './orgs.service.js';

/** `users` comes from the members module (its entry's offer), built once. */
export function registerOrgsModule(app: FastifyInstance, deps: ModuleDeps, users: MembersRepository): void {
  orgsRoutes(app, new OrgsService(new OrgsRepository(deps.db), users, deps.orgAccess, deps.access));
}
