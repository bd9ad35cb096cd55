import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { ClassesService } from './classes.service.js';
import { ClassCreate, ClassDeletedOut, ClassDeleteQuery, ClassInUseOut, ClassOut, ClassParams, ClassUpdate } from './classes.schemas.js';

export function classesRoutes(server: FastifyInstance, classes: ClassesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['classes'];

  app.get('/api/projects/:id/classes', {
    schema: { tags, summary: "A project's classes in creation order", params: IdParams, response: { 200: Type.Array(ClassOut), ...errors(401, 404, 422) } },
  }, async (request) => classes.list(callerOf(request), request.params.id));

  app.post('/api/projects/:id/classes', {
    schema: {
      tags,
      summary: 'Create a class',
      description: 'Names are unique within a project (409). Without `color` the class gets the next colour of a fixed palette.',
      params: IdParams,
      body: ClassCreate,
      response: { 201: ClassOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await classes.create(callerOf(request), request.params.id, request.body)));

  app.patch('/api/classes/:class_id', {
    schema: { tags, summary: 'Rename or recolour a class', params: ClassParams, body: ClassUpdate, response: { 200: ClassOut, ...errors(401, 403, 404, 409, 422) } },
  }, async (request) => classes.update(callerOf(request), request.params.class_id, request.body));

  app.delete('/api/classes/:class_id', {
    schema: {
      tags,
      summary: 'Delete a class',
      description:
        'An unused class is deleted with 204. A class that annotations use answers 409 with `annotation_count` and ' +
        'changes nothing, unless `cascade=true`: then its annotations are deleted with it and the answer is 200 ' +
        '`{deleted_annotations}` (also when there were none); each deleted annotation gets a `delete` revision. ' +
        'Cascading is refused with 409 naming the images and holders in `locks` when another user has locked an image ' +
        'with such an annotation; nothing changes.',
      params: ClassParams,
      querystring: ClassDeleteQuery,
      response: { 200: ClassDeletedOut, 204: Type.Null(), ...errors(401, 403, 404, 422), 409: ClassInUseOut },
    },
  }, async (request, reply) => {
    const result = await classes.delete(callerOf(request), request.params.class_id, request.query.cascade ?? false);
    return result ? result : reply.status(204).send(null);
  });
}
