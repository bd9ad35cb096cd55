import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors } from '../../http/schemas.js';
import { ProjectOut } from '../projects/projects.schemas.js';
import { readImportUpload } from './import-upload.js';
import type { ImportsService } from './imports.service.js';
import { ImportFolderRequest, ImportInvalidOut, ImportUploadBody } from './imports.schemas.js';

const OUTCOMES = 'All or nothing: any failure leaves no project, rows or files. Layouts: COCO (one JSON, or per-split folders '
  + 'with `_annotations.coco.json`), YOLO (`data.yaml` + images/labels, boxes and polygons), Pascal VOC, a folder per '
  + 'class, PNG class-index masks with `_classes.csv`. Splits are kept. Byte-identical copies of an image become one '
  + 'image; labels with no area inside their image are dropped. 413: an image over the pixel or size limit, or an '
  + 'archive over the size, entry-count or compression-ratio limits; 415: a file that is not an accepted image; 422: '
  + 'an unreadable layout or label file, an unsafe archive entry (`..`, absolute path, link, NUL byte), no images.';

export function importsRoutes(server: FastifyInstance, imports: ImportsService, options: { workDir: string; maxArchiveBytes: number }): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['projects'];

  app.post('/api/projects/import', {
    schema: {
      tags,
      summary: 'Create a project from a dataset archive',
      description: `Multipart: the zip in the part \`file\`; optional text parts \`name\` (default: the archive's name), `
        + `\`project_type\` and \`format\` (default: detected). ${OUTCOMES}`,
      consumes: ['multipart/form-data'],
      body: ImportUploadBody,
      response: { 201: ProjectOut, ...errors(400, 401, 413, 415), 422: ImportInvalidOut },
    },
    // The handler reads the parts as a stream, so the body schema only documents them; this placeholder satisfies it.
    preValidation: async (request) => {
      request.body = { file: null };
    },
  }, async (request, reply) => {
    const caller = callerOf(request);
    const upload = await readImportUpload(request, options.workDir, options.maxArchiveBytes);
    return reply.status(201).send(await imports.importArchive(caller, upload));
  });

  app.post('/api/projects/import/folder', {
    schema: {
      tags,
      summary: 'Create a project from a dataset folder on the server',
      description: `\`path\` is resolved (links included) inside the configured import root; without one, or outside it, 403. ${OUTCOMES}`,
      body: ImportFolderRequest,
      response: { 201: ProjectOut, ...errors(401, 403, 413, 415), 422: ImportInvalidOut },
    },
  }, async (request, reply) => reply.status(201).send(await imports.importFolder(callerOf(request), request.body)));
}
