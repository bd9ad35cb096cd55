import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf, SESSION_COOKIE } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { InvitationsService } from './invitations.service.js';
import {
  InvitationAccept,
  InvitationAcceptedOut,
  InvitationCreate,
  InvitationCreatedOut,
  InvitationListedOut,
  InvitationParams,
  InvitationPreviewOut,
  TokenParams,
} from './invitations.schemas.js';

export function invitationsRoutes(server: FastifyInstance, invitations: InvitationsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['members'];

  app.post('/api/projects/:id/invitations', {
    schema: {
      tags,
      summary: 'Invite someone without an account by e-mail address',
      description: 'Answers the link to share (`url`, with its secret `token`); no e-mail is sent. The list shows a pending link again where the server has a SECRETS_KEY. The link makes '
        + 'the account and joins the project with `role`; it works once and expires after `expires_in_days` (default 7). '
        + '409 when the address already has an account (add it as a member).',
      params: IdParams,
      body: InvitationCreate,
      response: { 201: InvitationCreatedOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await invitations.create(callerOf(request), request.params.id, request.body)));

  app.get('/api/projects/:id/invitations', {
    schema: {
      tags,
      summary: "The project's invitations, newest first, each pending one with its link",
      description: 'For those who manage members (`project.members`): a pending invitation\'s `url` is its link to copy again '
        + '(the secret is kept encrypted with the server\'s SECRETS_KEY; `url` is null without one). Used and expired ones have none.',
      params: IdParams,
      response: { 200: Type.Array(InvitationListedOut), ...errors(401, 403, 404, 422) },
    },
  }, async (request) => invitations.list(callerOf(request), request.params.id));

  app.delete('/api/invitations/:id', {
    schema: { tags, summary: 'Revoke an invitation (its link stops working)', params: InvitationParams, response: { 204: Type.Null(), ...errors(401, 403, 404, 422) } },
  }, async (request, reply) => {
    await invitations.revoke(callerOf(request), request.params.id);
    return reply.status(204).send(null);
  });

  app.get('/api/invitations/:token', {
    config: { public: true },
    schema: {
      tags,
      summary: 'What an invitation link offers (public: the link is the credential)',
      params: TokenParams,
      response: { 200: InvitationPreviewOut, ...errors(404, 422) },
    },
  }, async (request) => invitations.preview(request.params.token));

  app.post('/api/invitations/:token/accept', {
    config: { public: true },
    schema: {
      tags,
      summary: 'Accept an invitation: create the account, join the project, log in',
      description: 'The account gets the invited address; the answer is a login (and sets the session cookie). 404 when the link is unknown, used or expired.',
      params: TokenParams,
      body: InvitationAccept,
      response: { 201: InvitationAcceptedOut, ...errors(404, 409, 422, 429) },
    },
  }, async (request, reply) => {
    const session = await invitations.accept(request.params.token, request.body, request.ip);
    reply.setCookie(SESSION_COOKIE, session.token, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      secure: request.protocol === 'https',
      expires: new Date(session.expires_at),
    });
    return reply.status(201).send(session);
  });
}
