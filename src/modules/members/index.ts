import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { MembersRepository } from './members.repository.js';
import { membersRoutes } from './members.routes.js';
import { MembersService } from './members.service.js';

export function registerMembersModule(app: FastifyInstance, deps: ModuleDeps): void {
  membersRoutes(app, new MembersService(new MembersRepository(deps.db), deps.access));
}
