import type { FastifyInstance } from 'fastify';
import type { SecretBox } from '../../lib/secret-box.js';
import type { ModuleDeps } from '../module-deps.js';
import { InvitationsRepository } from './invitations.repository.js';
import { invitationsRoutes } from './invitations.routes.js';
import { InvitationsService, type Accounts } from './invitations.service.js';

/** `accounts` is the auth service (account creation and login); `secrets` seals the links (null without SECRETS_KEY). */
export function registerInvitationsModule(app: FastifyInstance, deps: ModuleDeps, accounts: Accounts, secrets: SecretBox | null): void {
  invitationsRoutes(app, new InvitationsService(new InvitationsRepository(deps.db), deps.access, accounts, secrets));
}
