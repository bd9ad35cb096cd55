import type { FastifyInstance } from 'fastify';
import { MembersRepository } from '../members/members.repository.js';
import type { ModuleDeps } from '../module-deps.js';
import { OrgsRepository } from './orgs.repository.js';
import { orgsRoutes } from './orgs.routes.js';
import { OrgsService } from './orgs.service.js';

export function registerOrgsModule(app: FastifyInstance, deps: ModuleDeps): void {
  orgsRoutes(app, new OrgsService(new OrgsRepository(deps.db), new MembersRepository(deps.db), deps.orgAccess, deps.access));
}
