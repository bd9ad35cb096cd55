import { opened } from '../../http/opened-stream.js';
import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { sendPage } from '../../http/pagination.js';
import { errors, IdParams } from '../../http/schemas.js';
import { IMAGE_TYPES } from '../../imaging/image-type.js';
import type { ImagesService, StoredFile } from './images.service.js';
import {
  ImageFileParams,
  ImageListQuery,
  ImageListItem,
  ImageOut,
  ImageParams,
  ImagesBulkDeleteBody,
  ImagesBulkDeleteOut,
  ImageUpdate,
  ImageUploadBody,
  UploadInvalidOut,
  UploadOut,
  UploadRejectedOut,
} from './images.schemas.js';
import { uploadedFiles } from './upload-parts.adapter.js';

/** A response of raw bytes, documented under its media types. */
const Binary = (description: string, mediaTypes: readonly string[]) => ({
  description,
  content: Object.fromEntries(mediaTypes.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
});
const IMAGE_MEDIA_TYPES = Object.values(IMAGE_TYPES).map((t) => t.mime);

export function imagesRoutes(server: FastifyInstance, images: ImagesService, maxUploadBytes: number): void {
  projectImageRoutes(server, images, maxUploadBytes);
  oneImageRoutes(server, images);
  imageFileRoutes(server, images);
}

/** A project's images: list them, upload more. */
function projectImageRoutes(server: FastifyInstance, images: ImagesService, maxUploadBytes: number): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['images'];

  app.get('/api/projects/:id/images', {
    schema: {
      tags,
      summary: "A project's images in upload order",
      description: 'Paged with `limit` and `offset` or `after` (the last id of the previous page, fast at any depth). '
        + 'The total is in `X-Total-Count`, the next page in `Link`. The filters `split`, `review_state`, `class_id` '
        + '(images with at least one annotation of that class) and `annotated` (true/false) combine; the total counts '
        + 'what they let through. A `class_id` that is not a class of this project is 404.',
      params: IdParams,
      querystring: ImageListQuery,
      response: { 200: Type.Array(ImageListItem), ...errors(401, 404, 422) },
    },
  }, async (request, reply) => {
    const page = await images.list(callerOf(request), request.params.id, request.query);
    return sendPage(request, reply, page, request.query.limit);
  });

  app.post('/api/projects/:id/images', {
    schema: {
      tags,
      summary: 'Upload images',
      description: 'Multipart, one or more parts named `files`. JPEG, PNG, WebP, TIFF, GIF and AVIF are accepted, told by '
        + 'their bytes. Each file gets an outcome: created, duplicate (identical bytes already in the project) or rejected '
        + '(413 too large or too many pixels, 415 not an accepted type, 422 not decodable). Answers 201 when an image was '
        + 'created, 200 when all were duplicates, and the first rejection status when every file was rejected.',
      consumes: ['multipart/form-data'],
      params: IdParams,
      body: ImageUploadBody,
      response: {
        200: UploadOut,
        201: UploadOut,
        ...errors(400, 401, 403, 404),
        413: UploadRejectedOut,
        415: UploadRejectedOut,
        422: UploadInvalidOut,
      },
    },
    // The handler reads the parts as a stream, so the body schema only documents them; this placeholder satisfies it.
    preValidation: async (request) => {
      request.body = { files: [] };
    },
  }, async (request, reply) => {
    const result = await images.upload(callerOf(request), request.params.id, uploadedFiles(request, maxUploadBytes));
    return reply.status(result.created > 0 ? 201 : 200).send(result);
  });
}

/** An image as a record: read it, change its split, delete it (or several). */
function oneImageRoutes(server: FastifyInstance, images: ImagesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['images'];

  app.get('/api/images/:image_id', {
    schema: { tags, summary: 'One image', params: ImageParams, response: { 200: ImageOut, ...errors(401, 404, 422) } },
  }, async (request) => images.get(callerOf(request), request.params.image_id));

  app.patch('/api/images/:image_id', {
    schema: {
      tags,
      summary: "Change an image's split",
      description: "Another user's editing lock on the image: 409 naming the holder and expiry (`lock`).",
      params: ImageParams,
      body: ImageUpdate,
      response: { 200: ImageOut, ...errors(401, 403, 404, 409, 422) },
    },
  }, async (request) => images.update(callerOf(request), request.params.image_id, request.body));

  app.delete('/api/images/:image_id', {
    schema: {
      tags,
      summary: 'Delete an image with its annotations and files',
      description: 'The `X-Deleted-Annotations` header says how many annotations were deleted with it.',
      params: ImageParams,
      response: { 204: Type.Null(), ...errors(401, 403, 404, 422) },
    },
  }, async (request, reply) => {
    const { deletedAnnotations } = await images.delete(callerOf(request), request.params.image_id);
    return reply.status(204).header('X-Deleted-Annotations', String(deletedAnnotations)).send(null);
  });

  app.post('/api/images/bulk-delete', {
    schema: {
      tags,
      summary: 'Delete several images',
      description: 'With `project_id`, only images of that project are deleted; other ids are reported in `not_found`. '
        + 'When another user holds the editing lock of any image that would be deleted: 409 naming the images and holders '
        + 'in `locks`, and nothing is deleted.',
      body: ImagesBulkDeleteBody,
      response: { 200: ImagesBulkDeleteOut, ...errors(401, 409, 422) },
    },
  }, async (request) => images.bulkDelete(callerOf(request), request.body));
}

/** The bytes of an image: its original, its thumbnail. */
function imageFileRoutes(server: FastifyInstance, images: ImagesService): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['images'];

  app.get('/api/projects/:id/images/file/:filename', {
    schema: {
      tags,
      summary: 'The original bytes of an image, by its stored file name',
      params: ImageFileParams,
      response: { 200: Binary('The image exactly as uploaded', IMAGE_MEDIA_TYPES), 304: Type.Null(), ...errors(401, 404, 422) },
    },
  }, async (request, reply) => {
    const file = await images.file(callerOf(request), request.params.id, request.params.filename);
    // A file name can be reused after a delete, so clients revalidate (a cheap 304 while the bytes are the same).
    return sendStoredFile(request, reply, file, 'private, no-cache');
  });

  app.get('/api/images/:image_id/thumbnail', {
    schema: {
      tags,
      summary: 'WebP thumbnail of an image (upright, longest side 256)',
      params: ImageParams,
      response: { 200: Binary('WebP image', ['image/webp']), 304: Type.Null(), ...errors(401, 404, 422) },
    },
  }, async (request, reply) => {
    const file = await images.thumbnail(callerOf(request), request.params.image_id);
    // Image ids are never reused and a thumbnail never changes, so it may be cached for a day.
    return sendStoredFile(request, reply, file, 'private, max-age=86400');
  });
}

/** Streams a stored file; its ETag is the content hash, so a matching `If-None-Match` answers 304 without reading it. */
async function sendStoredFile(request: FastifyRequest, reply: FastifyReply, file: StoredFile, cacheControl: string) {
  const etag = `"${file.etag}"`;
  reply
    .header('ETag', etag)
    .header('Cache-Control', cacheControl)
    .header('X-Content-Type-Options', 'nosniff');
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch && ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
    return reply.status(304).send();
  }
  const stream = await opened(file.open());
  reply.type(file.mimeType).header('Content-Disposition', `inline; filename="${file.filename}"`);
  if (file.size !== null) reply.header('Content-Length', String(file.size));
  return reply.send(stream);
}
