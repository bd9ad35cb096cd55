import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { MODALITIES } from '../profile/profile.schemas.js';
import { ParamSpecs } from '../quality/quality.schemas.js';

export const ActionOut = Type.Object({
  id: Type.String(),
  title: Type.String(),
  modality: StringEnum(MODALITIES),
  description: Type.String(),
  params: ParamSpecs,
});
export type ActionOut = Static<typeof ActionOut>;

export const CleaningActionIn = Type.Object(
  { id: Type.String({ maxLength: 64 }), params: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown())) },
  { additionalProperties: false },
);
export type CleaningActionIn = Static<typeof CleaningActionIn>;

export const CleaningPreviewBody = Type.Object({ actions: Type.Array(CleaningActionIn, { minItems: 1, maxItems: 20 }) }, { additionalProperties: false });
export type CleaningPreviewBody = Static<typeof CleaningPreviewBody>;

export const CleaningApplyBody = Type.Object(
  {
    actions: Type.Array(CleaningActionIn, { minItems: 1, maxItems: 20 }),
    preview_token: Type.Optional(Type.String({ maxLength: 128, description: 'From the preview: refused (409) when the project changed since' })),
  },
  { additionalProperties: false },
);
export type CleaningApplyBody = Static<typeof CleaningApplyBody>;

export const CHANGE_KINDS = ['delete_image', 'delete_annotation', 'update_annotation', 'move_image', 'mark_image', 'delete_class', 'rename_class'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export const ChangeOut = Type.Object({
  action: Type.String(),
  kind: StringEnum(CHANGE_KINDS),
  image_id: Type.Optional(Type.Integer()),
  annotation_id: Type.Optional(Type.Integer()),
  class_id: Type.Optional(Type.Integer()),
  sample_id: Type.Optional(Type.Integer()),
  detail: Type.String(),
});
export type ChangeOut = Static<typeof ChangeOut>;

export const CleaningPreviewOut = Type.Object({
  preview_token: Type.String(),
  summary: Type.Record(Type.String(), Type.Integer(), { description: 'Count per change kind' }),
  changes: Type.Array(ChangeOut, { description: 'Every change the apply would make' }),
});
export type CleaningPreviewOut = Static<typeof CleaningPreviewOut>;

export const CleaningApplyOut = Type.Object({
  cleaning_run_id: Type.Integer(),
  summary: Type.Record(Type.String(), Type.Integer()),
});

export const CleaningRunOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  user_id: Nullable(Type.Integer()),
  actions: Type.Array(Type.Object({ id: Type.String(), params: Type.Record(Type.String(), Type.Unknown()) })),
  summary: Type.Record(Type.String(), Type.Integer()),
  status: StringEnum(['applied', 'reverted', 'expired'] as const),
  created_at: Timestamp,
  revertible_until: Timestamp,
  reverted_at: Nullable(Timestamp),
});
export type CleaningRunOut = Static<typeof CleaningRunOut>;

export const CleaningRunParams = Type.Object({ id: Id });
