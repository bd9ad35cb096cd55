import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { MembersService } from './members.service.js';
import { MemberCreate, MemberOut, MemberParams, MemberUpdate, MyAccessOut, RoleOut } from './members.schemas.js';

export function membersRoutes(server: FastifyInstance, members: MembersService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['members'];

  app.get('/api/identity/roles', {
    schema: { tags, summary: 'The project roles and what each may do', response: { 200: Type.Array(RoleOut), ...errors(401) } },
  }, async (request) => {
    callerOf(request);
    return members.roles();
  });

  app.get('/api/projects/:id/my-access', {
    schema: {
      tags,
      summary: "The caller's role in the project and its permissions",
      description: 'Pages use it to hide or disable (with the reason) what the caller may not do, instead of offering it and answering 403.',
      params: IdParams,
      response: { 200: MyAccessOut, ...errors(401, 404, 422) },
    },
  }, async (request) => members.myAccess(callerOf(request), request.params.id));

  app.get('/api/projects/:id/members', {
    schema: { tags, summary: "A project's owner and members", params: IdParams, response: { 200: Type.Array(MemberOut), ...errors(401, 404, 422) } },
  }, async (request) => members.list(callerOf(request), request.params.id));

  app.post('/api/projects/:id/members', {
    schema: {
      tags,
      summary: 'Add a member',
      description: 'Name the user by `email` or `user_id` (an unknown user is 422). A user who is already a member, or the owner, is 409.',
      params: IdParams,
      body: MemberCreate,
      response: { 201: MemberOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await members.add(callerOf(request), request.params.id, request.body)));

  app.patch('/api/projects/:id/members/:user_id', {
    schema: { tags, summary: "Change a member's role", params: MemberParams, body: MemberUpdate, response: { 200: MemberOut, ...errors(401, 403, 404, 409, 422) } },
  }, async (request) => members.changeRole(callerOf(request), request.params.id, request.params.user_id, request.body));

  app.delete('/api/projects/:id/members/:user_id', {
    schema: {
      tags,
      summary: 'Remove a member (or leave the project)',
      description: 'Admins remove anyone but the owner; every member may remove themselves. Their assignments and image locks in the project are removed too.',
      params: MemberParams,
      response: { 204: Type.Null(), ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => {
    await members.remove(callerOf(request), request.params.id, request.params.user_id);
    return reply.status(204).send(null);
  });
}
