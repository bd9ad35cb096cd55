import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { MembersRepository } from './members.repository.js';
import { membersRoutes } from './members.routes.js';
import { MembersService } from './members.service.js';

/** Project members; offers its repository to organizations, which look users up by id or email through it. */
export function registerMembersModule(app: FastifyInstance, deps: ModuleDeps): MembersRepository {
  const repository = new MembersRepository(deps.db);
  membersRoutes(app, new MembersService(repository, deps.access));
  return repository;
}
