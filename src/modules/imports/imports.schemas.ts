import { Type, type Static } from 'typebox';
import { FORMAT_DESCRIPTIONS, READABLE_FORMATS } from '../../formats/readers/index.js';
import { StringEnum, ValidationErrorOut } from '../../http/schemas.js';
import { ProjectType } from '../projects/projects.schemas.js';

export const ImportFormat = StringEnum(READABLE_FORMATS, {
  description: 'The archive\'s layout, forcing that reader. When absent it is decided from the annotation files\' content; '
    + 'several matching layouts or none answer 422 naming the files found and the values that apply. '
    + READABLE_FORMATS.map((f) => `\`${f}\`: ${FORMAT_DESCRIPTIONS[f]}`).join('; '),
});

const ProjectName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });

export const ImportFolderRequest = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 4096, description: 'A folder inside the configured import root (relative to it, or absolute)' }),
    name: Type.Optional(ProjectName),
    project_type: Type.Optional(ProjectType),
    format: Type.Optional(ImportFormat),
  },
  { additionalProperties: false },
);
export type ImportFolderRequest = Static<typeof ImportFolderRequest>;

const Binary = Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'A zip archive of the dataset' });

/** Documents the multipart parts; the handler reads them as a stream. */
export const ImportUploadBody = Type.Object({
  file: Binary,
  name: Type.Optional(ProjectName),
  project_type: Type.Optional(ProjectType),
  format: Type.Optional(ImportFormat),
});

/** What an import needs besides the dataset itself. */
export interface ImportOptions {
  name?: string;
  project_type?: Static<typeof ProjectType>;
  format?: Static<typeof ImportFormat>;
}

/** A request that failed validation lists its issues; a dataset that cannot be read says why in one sentence. */
export const ImportInvalidOut = Type.Object({ detail: Type.Union([Type.String(), ValidationErrorOut.properties.detail]) });
