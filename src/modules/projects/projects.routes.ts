import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { ProjectsService } from './projects.service.js';
import { BulkDeleteBody, BulkDeleteOut, ProjectCreate, ProjectOut, ProjectUpdate } from './projects.schemas.js';

export function projectsRoutes(server: FastifyInstance, projects: ProjectsService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['projects'];

  app.get('/api/projects', {
    schema: {
      tags,
      summary: 'Projects you can see, newest first',
      querystring: Type.Object({ q: Type.Optional(Type.String({ maxLength: 200, description: 'Name contains' })) }),
      response: { 200: Type.Array(ProjectOut), ...errors(401, 422) },
    },
  }, async (request) => projects.list(callerOf(request), request.query.q));

  app.post('/api/projects', {
    schema: { tags, summary: 'Create a project', body: ProjectCreate, response: { 201: ProjectOut, ...errors(401, 422) } },
  }, async (request, reply) => reply.status(201).send(await projects.create(callerOf(request), request.body)));

  app.get('/api/projects/:id', {
    schema: { tags, summary: 'One project', params: IdParams, response: { 200: ProjectOut, ...errors(401, 404, 422) } },
  }, async (request) => projects.get(callerOf(request), request.params.id));

  app.patch('/api/projects/:id', {
    schema: { tags, summary: 'Change a project', description: '`multi_label: false` on a classification project where an image holds two classes: 409, nothing changed.', params: IdParams, body: ProjectUpdate, response: { 200: ProjectOut, ...errors(401, 403, 404, 409, 422) } },
  }, async (request) => projects.update(callerOf(request), request.params.id, request.body));

  app.delete('/api/projects/:id', {
    schema: { tags, summary: 'Delete a project with its images, annotations and files', params: IdParams, response: { 204: Type.Null(), ...errors(401, 403, 404, 422) } },
  }, async (request, reply) => {
    await projects.delete(callerOf(request), request.params.id);
    return reply.status(204).send(null);
  });

  app.post('/api/projects/bulk-delete', {
    schema: { tags, summary: 'Delete several projects', body: BulkDeleteBody, response: { 200: BulkDeleteOut, ...errors(401, 422) } },
  }, async (request) => projects.bulkDelete(callerOf(request), request.body.ids));
}
