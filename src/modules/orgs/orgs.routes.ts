import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { OrgsService } from './orgs.service.js';
import { OrgCreate, OrgMemberCreate, OrgMemberOut, OrgMemberParams, OrgMemberUpdate, OrgOut } from './orgs.schemas.js';

export function orgsRoutes(server: FastifyInstance, orgs: OrgsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['orgs'];

  app.get('/api/orgs', {
    schema: { tags, summary: 'Organizations you belong to', response: { 200: Type.Array(OrgOut), ...errors(401) } },
  }, async (request) => orgs.list(callerOf(request)));

  app.post('/api/orgs', {
    schema: { tags, summary: 'Create an organization (you become its owner)', body: OrgCreate, response: { 201: OrgOut, ...errors(401, 422) } },
  }, async (request, reply) => reply.status(201).send(await orgs.create(callerOf(request), request.body)));

  app.get('/api/orgs/:id', {
    schema: { tags, summary: 'One organization', params: IdParams, response: { 200: OrgOut, ...errors(401, 404, 422) } },
  }, async (request) => orgs.get(callerOf(request), request.params.id));

  app.get('/api/orgs/:id/members', {
    schema: { tags, summary: "An organization's members", params: IdParams, response: { 200: Type.Array(OrgMemberOut), ...errors(401, 404, 422) } },
  }, async (request) => orgs.members(callerOf(request), request.params.id));

  app.post('/api/orgs/:id/members', {
    schema: {
      tags,
      summary: 'Add a member to an organization',
      description: 'Owners and admins add members; only owners add owners. An unknown user is 422, an existing member 409.',
      params: IdParams,
      body: OrgMemberCreate,
      response: { 201: OrgMemberOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await orgs.addMember(callerOf(request), request.params.id, request.body)));

  app.patch('/api/orgs/:id/members/:user_id', {
    schema: {
      tags,
      summary: "Change an organization member's role",
      description: 'Only owners grant or take the owner role; the last owner cannot step down (409).',
      params: OrgMemberParams,
      body: OrgMemberUpdate,
      response: { 200: OrgMemberOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => orgs.changeMember(callerOf(request), request.params.id, request.params.user_id, request.body));

  app.delete('/api/orgs/:id/members/:user_id', {
    schema: {
      tags,
      summary: 'Remove a member from an organization (or leave it)',
      params: OrgMemberParams,
      response: { 204: Type.Null(), ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => {
    await orgs.removeMember(callerOf(request), request.params.id, request.params.user_id);
    return reply.status(204).send(null);
  });
}
