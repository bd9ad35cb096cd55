import { Type, type Static } from 'typebox';
import { FORMAT_DESCRIPTIONS, READABLE_FORMATS } from '../../formats/readers/index.js';
import { Id, StringEnum, ValidationErrorOut } from '../../http/schemas.js';
import { MAX_SKIPPED_LISTED } from '../../formats/import-ledger.js';
import { ProjectOut, ProjectType } from '../projects/projects.schemas.js';

export const ImportFormat = StringEnum(READABLE_FORMATS, {
  description: 'The archive\'s layout, forcing that reader. When absent it is decided from the annotation files\' content; '
    + 'several matching layouts or none answer 422 naming the files found and the values that apply. '
    + READABLE_FORMATS.map((f) => `\`${f}\`: ${FORMAT_DESCRIPTIONS[f]}`).join('; '),
});

const STRICT_DESCRIPTION = 'When true, a dataset of which anything would be left out (see `skipped`) is refused: 422 whose body lists what '
    + 'would be lost (`detail`, `skipped`, `skipped_count`, `counts`), and nothing changes. Default false: the import goes '
    + 'on and its answer lists what was left out.';
export const Strict = Type.Boolean({ description: STRICT_DESCRIPTION });

export const ON_CONFLICT = ['skip', 'replace', 'append'] as const;
export const OnConflict = StringEnum(ON_CONFLICT, {
  description: 'For an entry whose bytes the project already has (merged into its image): `skip` (the default) leaves out each '
    + 'of its annotations that matches one the image has (same class and type, geometry within 0.5 px / 0.5°), so '
    + 'importing the same dataset twice adds nothing; `replace` deletes the image\'s annotations (each with a `delete` '
    + 'revision) and puts the entry\'s in their place; `append` adds them all.',
});
export type OnConflict = Static<typeof OnConflict>;

const ProjectName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });

export const ImportFolderRequest = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 4096, description: 'A folder inside the configured import root (relative to it, or absolute)' }),
    name: Type.Optional(ProjectName),
    project_type: Type.Optional(ProjectType),
    format: Type.Optional(ImportFormat),
    strict: Type.Optional(Strict),
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
  strict: Type.Optional(Type.String({ enum: ['true', 'false'], description: STRICT_DESCRIPTION })),
});

/** What an import needs besides the dataset itself. */
export interface ImportOptions {
  name?: string;
  project_type?: Static<typeof ProjectType>;
  format?: Static<typeof ImportFormat>;
  strict?: boolean;
}

export const NEW_CLASSES = ['create', 'refuse'] as const;
export const NewClasses = StringEnum(NEW_CLASSES, {
  description: 'What becomes of a dataset class no class of the project matches (by name, case-insensitively): `create` '
    + '(the default) adds it to the project, `refuse` answers 422 naming every such class and changes nothing.',
});
export type NewClasses = Static<typeof NewClasses>;

export const ImportIntoFolderRequest = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 4096, description: 'A folder inside the configured import root (relative to it, or absolute)' }),
    format: Type.Optional(ImportFormat),
    new_classes: Type.Optional(NewClasses),
    strict: Type.Optional(Strict),
    on_conflict: Type.Optional(OnConflict),
  },
  { additionalProperties: false },
);
export type ImportIntoFolderRequest = Static<typeof ImportIntoFolderRequest>;

/** Documents the multipart parts of an import into a project; the handler reads them as a stream. */
export const ImportIntoUploadBody = Type.Object({
  file: Binary,
  format: Type.Optional(ImportFormat),
  new_classes: Type.Optional(NewClasses),
  strict: Type.Optional(Type.String({ enum: ['true', 'false'], description: STRICT_DESCRIPTION })),
  on_conflict: Type.Optional(OnConflict),
});

/** What an import into an existing project needs besides the dataset itself. */
export interface ImportIntoOptions {
  format?: Static<typeof ImportFormat>;
  new_classes?: NewClasses;
  strict?: boolean;
  on_conflict?: OnConflict;
}

export const ImportSkippedOut = Type.Object(
  {
    file: Type.String({ description: 'The dataset file it came from (an annotation file, or the image\'s name)' }),
    item: Type.String({ description: 'What it is, in the file\'s terms (e.g. `shape 3 (cuboid, label "car")`)' }),
    reason: Type.String(),
  },
  { description: 'Something of the dataset that was not imported, and why' },
);

const LedgerCountsOut = Type.Object({
  images: Type.Integer({ minimum: 0 }),
  annotations: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'By annotation type (the file\'s own name for a shape Versa has no type for)' }),
  attributes: Type.Integer({ minimum: 0, description: 'Attribute values' }),
  tracks: Type.Integer({ minimum: 0 }),
});

export const ImportCountsOut = Type.Object(
  { read: LedgerCountsOut, kept: LedgerCountsOut, skipped: LedgerCountsOut },
  { description: 'Every item the dataset\'s files hold, per kind: read = kept + skipped. Each skipped one is listed in `skipped`' },
);
export type ImportSkippedOut = Static<typeof ImportSkippedOut>;


export const ImportSharedBytesOut = Type.Object(
  {
    file: Type.String({ description: "The entry's file name in the dataset" }),
    same_as: Type.String({ description: 'The name of the image (of the project, or the first entry of the dataset) with the same bytes' }),
  },
  { description: 'An entry kept as an image of its own, with its own labels, whose bytes another image has: the file is stored once' },
);

/** What an import did with each entry of its dataset: the part of the answer both imports share. */
const importSummary = {
  format: Type.String({ description: 'The layout the dataset was read as' }),
  entries: Type.Integer({
    minimum: 0,
    description: 'Image entries the dataset lists. Every one is kept with its labels: it becomes an image (`images_created`), or gives '
      + 'its labels to an image of the project with the same bytes (`images_merged`)',
  }),
  images_created: Type.Integer({ minimum: 0, description: 'Images added to the project, one per entry not merged' }),
  images_merged: Type.Integer({
    minimum: 0,
    description: 'Entries whose bytes were already in the project: their labels were added to that image (one entry per image, '
      + 'the image of the same name first). Always 0 for a new project',
  }),
  images_sharing_bytes: Type.Integer({
    minimum: 0,
    description: 'Images created whose bytes another image of the project has too (byte-identical entries under different names, '
      + 'or more entries of some bytes than the project had images of them): kept as images of their own with their own '
      + 'labels, the file stored once. The `exact_duplicates` quality check flags them',
  }),
  shared_bytes: Type.Array(ImportSharedBytesOut, { description: `Those images, in dataset order (at most ${MAX_SKIPPED_LISTED} listed)` }),
  annotations_created: Type.Integer({ minimum: 0, description: 'Annotations added, to new and merged images (each with a `create` revision)' }),
  counts: ImportCountsOut,
  skipped: Type.Array(ImportSkippedOut, {
    description: `What was left out, item by item: shapes and attributes no Versa type holds, labels with no area inside their image, images the labels name that the archive lacks... (at most ${MAX_SKIPPED_LISTED} listed)`,
  }),
  skipped_count: Type.Integer({ minimum: 0, description: 'Items left out, all of them' }),
};

export const ImportSummaryOut = Type.Object(importSummary, { description: 'What the import made of the dataset' });
export type ImportSummaryOut = Static<typeof ImportSummaryOut>;

/** A new project made from a dataset, with what the import made of it. */
export const ProjectImportedOut = Type.Object({ ...ProjectOut.properties, import: ImportSummaryOut });
export type ProjectImportedOut = Static<typeof ProjectImportedOut>;

export const ImportIntoOut = Type.Object({
  project_id: Id,
  ...importSummary,
  classes_created: Type.Array(Type.String(), { description: 'Classes added to the project' }),
  classes_matched: Type.Array(Type.String(), { description: "Project classes the dataset's classes were matched to, by their name in the project" }),
  conflicts: Type.Object(
    {
      on_conflict: OnConflict,
      matched: Type.Integer({ minimum: 0, description: 'Annotations of merged entries that match one their image already had' }),
      skipped: Type.Integer({ minimum: 0, description: 'Of those, left out (`skip`): the image keeps its own' }),
      replaced: Type.Integer({ minimum: 0, description: 'Annotations the images had that were deleted (`replace`)' }),
    },
    { description: 'What became of the annotations of entries merged into images the project has (see `on_conflict`)' },
  ),
  project: ProjectOut,
});
export type ImportIntoOut = Static<typeof ImportIntoOut>;

/** A request that failed validation lists its issues; a dataset that cannot be read says why in one sentence. */
export const ImportInvalidOut = Type.Object({
  detail: Type.Union([Type.String(), ValidationErrorOut.properties.detail]),
  skipped: Type.Optional(Type.Array(ImportSkippedOut, { description: '`strict`: what the import would leave out' })),
  skipped_count: Type.Optional(Type.Integer({ minimum: 0 })),
  counts: Type.Optional(ImportCountsOut),
});
