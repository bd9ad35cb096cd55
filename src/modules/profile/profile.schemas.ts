import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '../../http/schemas.js';
import { ATTRIBUTE_TYPES } from '../../imaging/class-specs.js';

/** The kinds of sample, in the order reports list them. */
export const SAMPLE_MODALITIES = ['text', 'tabular', 'audio', 'video', 'llm'] as const;
/** The modalities of a project's records: its images and each kind of sample. */
export const MODALITIES = ['image', ...SAMPLE_MODALITIES] as const;
export type Modality = (typeof MODALITIES)[number];

const SplitCounts = Type.Record(Type.String(), Type.Integer());

const SampleSplits = Type.Object({ train: Type.Integer(), valid: Type.Integer(), test: Type.Integer(), unassigned: Type.Integer() });

export const SampleProfileOut = Type.Object(
  {
    total: Type.Integer(),
    labelled: Type.Integer({ description: 'Samples with a label, spans or a value' }),
    splits: SampleSplits,
    modalities: Type.Array(Type.Object({ modality: StringEnum(SAMPLE_MODALITIES), samples: Type.Integer(), labelled: Type.Integer(), splits: SampleSplits })),
    labels: Type.Array(
      Type.Object({ modality: StringEnum(SAMPLE_MODALITIES), name: Type.String(), samples: Type.Integer(), by_split: SplitCounts }),
      { description: 'Samples per class (a multi-label sample under its first class), most first' },
    ),
    lengths: Type.Array(
      Type.Object({
        modality: StringEnum(['text', 'llm'] as const),
        measures: Type.String({ description: 'What is counted: the text, or the prompt, responses and messages of an LLM record (characters)' }),
        samples: Type.Integer(),
        min: Type.Integer(),
        median: Type.Number(),
        p95: Type.Number(),
        max: Type.Integer(),
        histogram: Type.Array(Type.Object({ from: Type.Integer(), to: Type.Integer({ description: 'Exclusive' }), samples: Type.Integer() })),
      }),
    ),
    tabular: Nullable(
      Type.Object({
        target: Nullable(Type.String()),
        task: Nullable(StringEnum(['classification', 'regression'] as const)),
        rows: Type.Integer(),
        columns: Type.Array(
          Type.Object({
            name: Type.String(),
            type: Type.String({ description: 'integer, number, boolean, category, text or date (as the import inferred)' }),
            target: Type.Boolean(),
            missing: Type.Integer(),
            distinct: Type.Integer({ description: 'Distinct present values (counted up to a limit: see distinct_capped)' }),
            distinct_capped: Type.Boolean({ description: 'More values than were counted: distinct is a lower bound, top_values approximate' }),
            min: Type.Optional(Type.Number()),
            max: Type.Optional(Type.Number()),
            mean: Type.Optional(Type.Number()),
            top_values: Type.Optional(Type.Array(Type.Object({ value: Type.String(), samples: Type.Integer() }), { description: 'Non-numeric columns: the most frequent values (first 10)' })),
          }),
        ),
      }),
    ),
  },
  { description: 'Projects with samples: counts per modality and split, classes, text lengths, tabular columns' },
);
export type SampleProfileOut = Static<typeof SampleProfileOut>;
export const AttributeProfile = Type.Object({
  class_id: Type.Integer(),
  class: Type.String(),
  name: Type.String({ description: 'The attribute' }),
  type: StringEnum(ATTRIBUTE_TYPES, { description: "The class's spec of it (for values no spec declares any more: what they are)" }),
  annotations: Type.Integer({ description: 'Annotations holding a value (one that does not say holds the default and is not counted)' }),
  distinct: Type.Integer({ description: 'Distinct values held' }),
  distinct_capped: Type.Boolean({ description: 'More values than were kept: distinct is a lower bound, the mean and top values approximate' }),
  values: Type.Optional(Type.Record(Type.String(), Type.Integer(), { description: 'checkbox and select: annotations per value, most first' })),
  min: Type.Optional(Type.Number({ description: 'number: the smallest value' })),
  max: Type.Optional(Type.Number()),
  mean: Type.Optional(Type.Number()),
  top_values: Type.Optional(Type.Array(Type.Object({ value: Type.String(), annotations: Type.Integer() }), { description: 'text: the most frequent values (first 10)' })),
});
export type AttributeProfile = Static<typeof AttributeProfile>;

export const KeypointProfile = Type.Object({
  class_id: Type.Integer(),
  class: Type.String(),
  instances: Type.Integer(),
  points: Type.Array(
    Type.Object({ point: Type.String({ description: 'The skeleton point (#i when the class has no skeleton)' }), not_labelled: Type.Integer({ description: 'v = 0' }), occluded: Type.Integer({ description: 'v = 1' }), visible: Type.Integer({ description: 'v = 2' }) }),
    { description: 'In skeleton order' },
  ),
});
export type KeypointProfile = Static<typeof KeypointProfile>;

export const ProfileOut = Type.Object({
  project_id: Type.Integer(),
  modality: StringEnum(MODALITIES),
  totals: Type.Object({ images: Type.Integer(), annotated_images: Type.Integer(), annotations: Type.Integer(), classes: Type.Integer() }),
  splits: Type.Record(Type.String(), Type.Object({ images: Type.Integer(), annotated: Type.Integer() }), { description: 'train, valid, test, unassigned' }),
  classes: Type.Array(
    Type.Object({ id: Type.Integer(), name: Type.String(), color: Type.String(), images: Type.Integer(), instances: Type.Integer(), instances_by_split: SplitCounts, images_by_split: SplitCounts }),
  ),
  annotation_types: Type.Record(Type.String(), Type.Integer(), { description: 'Annotations per type (bbox, polygon, mask, classification, keypoints, polyline, points, ellipse)' }),
  attributes: Type.Array(AttributeProfile, { description: 'Attribute values per class and attribute, in the order the class declares them' }),
  keypoints: Type.Array(KeypointProfile, { description: 'Keypoint visibility per skeleton point, per class with keypoint instances' }),
  annotations_per_image: Type.Array(Type.Object({ annotations: Type.Integer(), images: Type.Integer() })),
  image_sizes: Type.Array(Type.Object({ width: Type.Integer(), height: Type.Integer(), images: Type.Integer() }), { description: 'Distinct sizes, most frequent first (first 200)' }),
  aspect_ratios: Type.Array(Type.Object({ bucket: Type.String(), images: Type.Integer() }), { description: 'width / height in buckets' }),
  box_sizes: Type.Object({ small: Type.Integer(), medium: Type.Integer(), large: Type.Integer() }, { description: 'COCO: area < 32², < 96², larger (bbox annotations)' }),
  box_heatmap: Type.Object({ cells: Type.Integer(), counts: Type.Array(Type.Array(Type.Integer()), { description: 'counts[row][column] of box centres' }) }),
  samples: Type.Optional(SampleProfileOut),
});
export type ProfileOut = Static<typeof ProfileOut>;
