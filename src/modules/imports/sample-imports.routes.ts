import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/authenticate.js';
import { errors, IdParams } from '../../http/schemas.js';
import { readSampleUpload, type SampleUpload } from '../samples/sample-upload.adapter.js';
import type { SamplesService } from '../samples/samples.service.js';
import { ImportOut, JsonlImportBody, TabularImportBody, TextImportBody } from '../samples/samples.schemas.js';

const IMPORT_RULES = 'All or nothing: the file is checked whole before anything is stored, and a bad line answers 422 naming its '
  + 'line number (`loc` ends with it) while nothing is stored. Class names new to the project become classes. Nothing in '
  + 'the file is ever evaluated (CSV cells are text, JSON is parsed).';

/**
 * `/api/projects/{id}/import/{text,tabular,jsonl}`: samples imported from a data file, spooled to a private folder under
 * `workDir` and read by the samples module.
 */
export function sampleImportsRoutes(server: FastifyInstance, samples: SamplesService, options: { workDir: string; maxImportBytes: number }): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['samples'];
  const upload = (request: FastifyRequest) => readSampleUpload(request, options.workDir, options.maxImportBytes);
  const withUpload = async <T>(request: FastifyRequest, work: (u: SampleUpload) => Promise<T>): Promise<T> => {
    const u = await upload(request);
    try {
      return await work(u);
    } finally {
      await u.cleanup();
    }
  };
  // The handlers read multipart parts as a stream; the body schema documents them and this placeholder satisfies it.
  const placeholder = async (request: FastifyRequest) => {
    request.body = { file: '', target: '', modality: 'llm' };
  };

  app.post('/api/projects/:id/import/text', {
    schema: {
      tags,
      summary: 'Import text samples from JSONL or CSV',
      description: `Multipart: the data in the part \`file\` (JSONL when it starts with \`{\`, otherwise CSV with a header); text parts `
        + `\`text_field\` (default \`text\`), \`label_field\` (\`label\`; a list is multi-label), \`spans_field\` (\`spans\`: `
        + `\`[{start, end, label}]\` or \`[[start, end, label]]\`; \`entities\` is read too). A named field missing from the CSV header is 422. ${IMPORT_RULES}`,
      consumes: ['multipart/form-data'],
      params: IdParams,
      body: TextImportBody,
      response: { 201: ImportOut, ...errors(400, 401, 403, 404, 413, 422) },
    },
    preValidation: placeholder,
  }, async (request, reply) => reply.status(201).send(await withUpload(request, (u) => samples.importText(callerOf(request), request.params.id, u))));

  app.post('/api/projects/:id/import/tabular', {
    schema: {
      tags,
      summary: 'Import tabular samples from CSV',
      description: `Multipart: the CSV in \`file\`, the text part \`target\` (the label column) and optionally \`task\`. Column types `
        + `(integer, number, boolean, category, text, date) are inferred; empty cells are null. A numeric target with many values is `
        + `a regression target (stored as \`value\`), otherwise its values are classes (\`label\`). A later import into the same `
        + `project must have the same columns and target. Ragged rows are 422 naming the line. ${IMPORT_RULES}`,
      consumes: ['multipart/form-data'],
      params: IdParams,
      body: TabularImportBody,
      response: { 201: ImportOut, ...errors(400, 401, 403, 404, 413, 422) },
    },
    preValidation: placeholder,
  }, async (request, reply) => reply.status(201).send(await withUpload(request, (u) => samples.importTabular(callerOf(request), request.params.id, u))));

  app.post('/api/projects/:id/import/jsonl', {
    schema: {
      tags,
      summary: 'Import audio, video or LLM samples from JSONL (or a zip of JSONL and media)',
      description: `Multipart: \`file\` is a JSONL file, or a zip holding one \`.jsonl\` and the media files its lines name `
        + `(\`file\`); text part \`modality\` (audio, video, llm). Media are recognised by their bytes (WAV, MP3, FLAC, OGG, `
        + `MP4/M4A, WebM, MOV), never their names, and probed for duration (and sample rate / fps where the container says). `
        + `Lines: audio/video \`{file, label?, segments?: [{start_s, end_s, label}], transcript?, split?}\`; llm `
        + `\`{prompt?, response?, chosen?, rejected?, messages?, label?, rating?, split?}\`; other fields go to \`metadata\`. `
        + `A missing file, or one that is not the modality's media, is 422 naming the line and file. ${IMPORT_RULES}`,
      consumes: ['multipart/form-data'],
      params: IdParams,
      body: JsonlImportBody,
      response: { 201: ImportOut, ...errors(400, 401, 403, 404, 413, 422) },
    },
    preValidation: placeholder,
  }, async (request, reply) => reply.status(201).send(await withUpload(request, (u) => samples.importJsonl(callerOf(request), request.params.id, u))));
}
