import { Type, type Static } from 'typebox';
import { StringEnum, Timestamp } from '../../http/schemas.js';
import { MODALITIES } from '../profile/profile.schemas.js';
import { SPLIT_NAMES } from '../../lib/vocabulary.js';

export const ModalityQuery = Type.Object({
  modality: Type.Optional(StringEnum(MODALITIES, { description: 'Only the entries of this modality' })),
});
export type ModalityQuery = Static<typeof ModalityQuery>;

const ParamSpec = Type.Object(
  {
    type: StringEnum(['integer', 'number', 'boolean', 'string', 'integer[]'] as const),
    default: Type.Unknown(),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
    enum: Type.Optional(Type.Array(Type.String())),
    description: Type.String(),
  },
  { additionalProperties: false },
);
export const ParamSpecs = Type.Record(Type.String(), ParamSpec, { description: 'Parameters by name: type, default, range' });

export const SEVERITIES = ['error', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const CheckOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  modality: StringEnum(MODALITIES),
  severity: StringEnum(SEVERITIES),
  description: Type.String(),
  params: ParamSpecs,
  /** Present for model-assisted checks: they run only when the project has a detector. */
  requires: Type.Optional(Type.String()),
});
export type CheckOut = Static<typeof CheckOut>;

// ---- quality report

export const QualityBody = Type.Object(
  {
    checks: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100, description: 'Check ids to run (default: every check of the project\'s modality)' })),
    params: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.Record(Type.String({ maxLength: 64 }), Type.Unknown()), {
        description: 'Parameters by check id, e.g. {"blurry": {"threshold": 50}}; unknown names or values out of range are 422',
      }),
    ),
  },
  { additionalProperties: false },
);
export type QualityBody = Static<typeof QualityBody>;

const Item = Type.Object({
  image_id: Type.Optional(Type.Integer()),
  annotation_id: Type.Optional(Type.Integer()),
  sample_id: Type.Optional(Type.Integer()),
  score: Type.Optional(Type.Number({ description: 'Ranking score where the check ranks its items (worst first)' })),
  detail: Type.String(),
});
export type QualityItem = Static<typeof Item>;

export const CheckResultOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  modality: StringEnum(MODALITIES, { description: 'The modality of the records the check reads' }),
  severity: StringEnum(SEVERITIES),
  count: Type.Integer({ description: 'Every affected item' }),
  message: Type.String(),
  items: Type.Array(Item, { description: 'The first 100 items' }),
  image_ids: Type.Optional(Type.Array(Type.Integer(), { description: 'Distinct affected images (first 10,000), for the image grid filter' })),
  sample_ids: Type.Optional(Type.Array(Type.Integer(), { description: 'Distinct affected samples (first 10,000)' })),
  skipped: Type.Optional(Type.String({ description: 'Why the check did not run (e.g. no detector registered)' })),
});
export type CheckResultOut = Static<typeof CheckResultOut>;

export const QualityReportOut = Type.Object({
  project_id: Type.Integer(),
  generated_at: Timestamp,
  score: Type.Integer({ minimum: 0, maximum: 100, description: 'Share of records (images and samples) affected by no error- or warning-level check' }),
  features: Type.Object({ computed: Type.Integer({ description: 'Images whose features this report had to compute (cached for next time)' }) }),
  checks: Type.Array(CheckResultOut),
});
export type QualityReportOut = Static<typeof QualityReportOut>;
