import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { parseIntoFields, readImportUpload } from './import-upload.adapter.js';
import type { ImportsService } from './imports.service.js';
import {
  ImportFolderRequest,
  ImportIntoFolderRequest,
  ImportIntoOut,
  ImportIntoUploadBody,
  ImportInvalidOut,
  ImportUploadBody,
  ProjectImportedOut,
} from './imports.schemas.js';

const OUTCOMES = 'All or nothing: any failure leaves no project, rows or files. Layouts: COCO (one JSON, or per-split folders '
  + 'with `_annotations.coco.json`), YOLO (`data.yaml` + images/labels, boxes and polygons), Pascal VOC, a folder per '
  + 'class, PNG class-index masks with `_classes.csv`. Splits are kept. Every image entry the dataset lists becomes an '
  + 'image with its own labels, byte-identical ones under different names too (their file is stored once; `import` '
  + 'counts and lists them); labels with no area inside their image and whatever the layout holds that Versa cannot keep '
  + 'are left out and listed in `import.skipped` (`strict=true` refuses the dataset instead: 422 listing them). 413: an image over the pixel or size limit, or an '
  + 'archive over the size, entry-count or compression-ratio limits; 415: a file that is not an accepted image; 422: '
  + 'an unreadable layout or label file, an unsafe archive entry (`..`, absolute path, link, NUL byte), no images.';

const INTO = 'Adds the dataset (any layout the project import reads) to this project, all or nothing: any failure leaves '
  + 'the project as it was (no rows, no files). Needs `images.write` and `annotations.write`; an annotator kept to '
  + 'their assigned images is refused (403). Dataset classes are matched to the project\'s by name, case-insensitively '
  + '(an exact match first); the others are created (`new_classes=create`, the default; creating needs `classes.write`, '
  + 'else 403 naming them) or refused (`new_classes=refuse`: 422 naming them). Splits are kept. Every image entry the '
  + 'dataset lists is kept with its labels. An entry whose bytes the project already has gives its labels to that image '
  + '(`images_merged`; one entry per image, the image of the same name first), which keeps its split unless it had '
  + 'none; 409 when another user holds the editing lock of such an image. The other entries become images, byte-identical '
  + 'ones under different names too (`images_sharing_bytes`, listed in `shared_bytes`: the file is stored once). Every '
  + 'annotation gets `source: import` and a `create` revision. A merged entry\'s annotations that match one its image has '
  + '(same class and type, geometry within 0.5 px) are left out by default (`on_conflict=skip`: importing the same '
  + 'dataset twice duplicates nothing), or replace the image\'s (`replace`), or are all added (`append`); `conflicts` '
  + 'counts them. Labels with no area inside their image are left out and listed in `skipped` (`strict=true` refuses '
  + 'the dataset instead, 422 listing them). 413: an image over the pixel or size limit, or an archive over '
  + 'the size, entry-count or compression-ratio limits; 415: a file that is not an accepted image; 422: an unreadable '
  + 'layout or label file, an unsafe archive entry, no images, refused classes.';

export function importsRoutes(server: FastifyInstance, imports: ImportsService, options: { workDir: string; maxArchiveBytes: number }): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['projects'];

  app.post('/api/projects/import', {
    schema: {
      tags,
      summary: 'Create a project from a dataset archive',
      description: `Multipart: the zip in the part \`file\`; optional text parts \`name\` (default: the archive's name), `
        + `\`project_type\`, \`format\` (default: detected) and \`strict\` (\`true\`: refuse, 422 listing it, a dataset of which `
        + `anything would be left out). ${OUTCOMES}`,
      consumes: ['multipart/form-data'],
      body: ImportUploadBody,
      response: { 201: ProjectImportedOut, ...errors(400, 401, 413, 415), 422: ImportInvalidOut },
    },
    // The handler reads the parts as a stream, so the body schema only documents them; this placeholder satisfies it.
    preValidation: async (request) => {
      request.body = { file: '' };
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
      response: { 201: ProjectImportedOut, ...errors(401, 403, 413, 415), 422: ImportInvalidOut },
    },
  }, async (request, reply) => reply.status(201).send(await imports.importFolder(callerOf(request), request.body)));

  app.post('/api/projects/:id/import', {
    schema: {
      tags,
      summary: 'Add a labelled dataset archive to a project',
      description: `Multipart: the zip in the part \`file\`; optional text parts \`format\` (default: detected) and `
        + `\`new_classes\` (\`create\` or \`refuse\`), \`strict\` (\`true\` or \`false\`) and \`on_conflict\` (\`skip\`, \`replace\` `
        + `or \`append\`). ${INTO}`,
      consumes: ['multipart/form-data'],
      params: IdParams,
      body: ImportIntoUploadBody,
      response: { 201: ImportIntoOut, ...errors(400, 401, 403, 404, 409, 413, 415), 422: ImportInvalidOut },
    },
    // The handler reads the parts as a stream, so the body schema only documents them; this placeholder satisfies it.
    preValidation: async (request) => {
      request.body = { file: '' };
    },
  }, async (request, reply) => {
    const caller = callerOf(request);
    const read = () => readImportUpload(request, options.workDir, options.maxArchiveBytes, parseIntoFields);
    return reply.status(201).send(await imports.importArchiveInto(caller, request.params.id, read));
  });

  app.post('/api/projects/:id/import/folder', {
    schema: {
      tags,
      summary: 'Add a labelled dataset folder on the server to a project',
      description: `\`path\` is resolved (links included) inside the configured import root; without one, or outside it, 403. ${INTO}`,
      params: IdParams,
      body: ImportIntoFolderRequest,
      response: { 201: ImportIntoOut, ...errors(401, 403, 404, 409, 413, 415), 422: ImportInvalidOut },
    },
  }, async (request, reply) => reply.status(201).send(await imports.importFolderInto(callerOf(request), request.params.id, request.body)));
}
