import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { VersionImagesTable, VersionsTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { SPLIT_NAMES } from '../../lib/vocabulary.js';

export const VERSION_STATUSES = ['pending', 'generating', 'ready', 'failed'] as const;

const Percent = Type.Integer({ minimum: 0, maximum: 100 });
export const SplitConfig = Type.Object(
  { train: Percent, valid: Percent, test: Percent },
  { additionalProperties: false, description: 'Integer percentages adding up to 100' },
);
export type SplitConfig = Static<typeof SplitConfig>;

const Config = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const VersionCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    notes: Type.Optional(Type.String({ maxLength: 10_000, default: '' })),
    split_config: Type.Optional(
      Type.Object(SplitConfig.properties, {
        additionalProperties: false,
        default: { train: 70, valid: 20, test: 10 },
        description:
          'Integer percentages adding up to 100 (default 70/20/10). Images that have a split keep it; images without ' +
          'one are assigned by these percentages with the version seed. The assignment is recorded in the version only; ' +
          'the project is not changed.',
      }),
    ),
    preprocessing_config: Type.Optional(Nullable(Config('null or {} = the defaults of GET /api/pipeline/defaults; options given override them'))),
    augmentation_config: Type.Optional(Nullable(Config('null or {} = augmentation off; giving any option turns it on unless `enabled` is false'))),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 4_294_967_295, description: 'Drawn at random when left out' })),
    include_predictions: Type.Optional(
      Type.Boolean({ default: false, description: 'Also freeze model suggestions nobody has accepted yet (default false: accepted annotations only)' }),
    ),
  },
  { additionalProperties: false },
);
export type VersionCreate = Static<typeof VersionCreate>;

const Counts = Type.Object({ train: Type.Integer(), valid: Type.Integer(), test: Type.Integer(), total: Type.Integer() });

export const VersionOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  number: Type.Integer({ description: '1, 2, 3… per project; never reused' }),
  name: Type.String(),
  notes: Type.String(),
  seed: Type.Integer(),
  split_config: SplitConfig,
  preprocessing_config: Config('The full preprocessing recipe, defaults filled in'),
  augmentation_config: Config('The full augmentation recipe, defaults filled in'),
  status: StringEnum(VERSION_STATUSES),
  progress: Type.Number({ description: 'Generation progress in [0, 1]' }),
  error: Nullable(Type.String()),
  job_id: Nullable(Type.Integer({ description: 'The generation job: follow it at GET /api/jobs/{id}' })),
  image_counts: Type.Object(Counts.properties, { description: 'Output images per split (0 until ready)' }),
  source_counts: Type.Object(Counts.properties, { description: 'Source images frozen into the version, per split' }),
  created_by: Nullable(Type.Integer()),
  created_at: Timestamp,
  finished_at: Nullable(Timestamp),
});
export type VersionOut = Static<typeof VersionOut>;

export const ProjectParams = Type.Object({ project_id: Id });
export const VersionParams = Type.Object({ project_id: Id, version_id: Id });
export const VersionIdParams = Type.Object({ id: Id });
export const VersionImageParams = Type.Object({ project_id: Id, version_id: Id, image_id: Id });
export const DiffParams = Type.Object({ project_id: Id, a: Id, b: Id });

export const VersionImagesQuery = Type.Object({
  ...PageQuery.properties,
  split: Type.Optional(StringEnum(SPLIT_NAMES)),
});
export type VersionImagesQuery = Static<typeof VersionImagesQuery>;

const Json = (description: string) => Type.Unsafe<unknown>({ description });

export const VersionAnnotationOut = Type.Object({
  class_name: Type.String(),
  class_index: Type.Integer(),
  annotation_type: Type.String(),
  geometry: Config('In output pixels; masks as `{rle, bbox}`'),
  attributes: Config('The annotation\'s attribute values `{name: value}`, carried unchanged by every step; {} when none'),
  group_id: Nullable(Type.Integer({ description: 'Shapes of one object share it (a polyline a crop cut in pieces gets one)' })),
});

export const VersionImageOut = Type.Object({
  id: Type.Integer(),
  version_id: Type.Integer(),
  split: Type.String(),
  filename: Type.String(),
  width: Type.Integer(),
  height: Type.Integer(),
  source_image_id: Nullable(Type.Integer({ description: 'The source image (it may have been deleted since)' })),
  sha256: Type.String(),
  lineage: Type.Array(Json('One transform step with every parameter it used'), {
    description: 'The exact steps that made this output from its source, in order',
  }),
  annotations: Type.Array(VersionAnnotationOut),
  file_url: Type.String(),
});
export type VersionImageOut = Static<typeof VersionImageOut>;

const DiffSide = Type.Object({ id: Type.Integer(), number: Type.Integer() });
export const VersionDiffOut = Type.Object({
  a: DiffSide,
  b: DiffSide,
  config_changes: Type.Array(Type.String(), { description: 'Recipe members that differ: seed, split_config, preprocessing_config.*, augmentation_config.*' }),
  images: Type.Object({
    added: Type.Array(Type.Integer(), { description: 'Source image ids in b only' }),
    removed: Type.Array(Type.Integer(), { description: 'Source image ids in a only' }),
    changed: Type.Array(
      Type.Object({
        source_image_id: Type.Integer(),
        content_changed: Type.Boolean({ description: 'The source bytes differ (sha256)' }),
        split: Nullable(Type.Object({ from: Type.String(), to: Type.String() })),
        annotations_added: Type.Integer(),
        annotations_removed: Type.Integer(),
      }),
    ),
    unchanged: Type.Integer(),
  }),
  annotations: Type.Object({
    added: Type.Integer({ description: 'Annotations in b with no identical annotation (class, type, geometry) in a, over shared and added images' }),
    removed: Type.Integer(),
  }),
  outputs: Type.Object({
    a: Type.Integer(),
    b: Type.Integer(),
    identical: Type.Integer({ description: 'Output files with the same name and the same sha256 in both' }),
  }),
});
export type VersionDiffOut = Static<typeof VersionDiffOut>;

export type VersionRow = Selectable<VersionsTable>;
export type VersionImageRow = Selectable<VersionImagesTable>;

export const VersionPreviewRequest = Type.Object(
  {
    image_id: Type.Optional(Id),
    preprocessing_config: Type.Optional(Nullable(Config('As for creating a version'))),
    augmentation_config: Type.Optional(Nullable(Config('As for creating a version'))),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 4_294_967_295, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 8, default: 4, description: 'Outputs to render (at most 8)' })),
  },
  { additionalProperties: false },
);
export type VersionPreviewRequest = Static<typeof VersionPreviewRequest>;

export const VersionPreviewOut = Type.Object({
  image_id: Type.Integer({ description: 'The source image rendered' }),
  outputs: Type.Array(
    Type.Object({
      data_url: Type.String({ description: 'The output image as a data: URL (JPEG)' }),
      width: Type.Integer(),
      height: Type.Integer(),
      lineage: Type.Array(Type.Unknown()),
      annotations: Type.Array(Type.Object({ class_name: Type.String(), annotation_type: Type.String(), geometry: Type.Object({}, { additionalProperties: true }) })),
    }),
  ),
});
export type VersionPreviewOut = Static<typeof VersionPreviewOut>;

/** A list of strings the recipe holds read-only. */
const Strings = (description: string) => Type.Unsafe<readonly string[]>(Type.Array(Type.String(), { description }));
/** One option of the image recipe as GET /api/pipeline/defaults lists it, for a form built from it. */
export const RecipeOptionOut = Type.Object({
  key: Type.String({ description: 'Dotted for nested groups (`resize.width`)' }),
  type: StringEnum(['boolean', 'integer', 'number', 'string', 'array', 'object'] as const),
  default: Type.Unknown(),
  description: Type.Optional(Type.String()),
  minimum: Type.Optional(Type.Number()),
  maximum: Type.Optional(Type.Number()),
  enum: Type.Optional(Strings('The values a string option takes')),
  items_enum: Type.Optional(Strings('The values the items of a list option take')),
});
export const RecipeOptionsOut = Type.Object({
  preprocessing_config: Type.Array(RecipeOptionOut),
  augmentation_config: Type.Array(RecipeOptionOut),
});
