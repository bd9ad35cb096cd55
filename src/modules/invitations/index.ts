import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { InvitationsRepository } from './invitations.repository.js';
import { invitationsRoutes } from './invitations.routes.js';
import { InvitationsService, type Accounts } from './invitations.service.js';

/** `accounts` is the auth service (account creation and login). */
export function registerInvitationsModule(app: FastifyInstance, deps: ModuleDeps, accounts: Accounts): void {
  invitationsRoutes(app, new InvitationsService(new InvitationsRepository(deps.db), deps.access, accounts));
}
