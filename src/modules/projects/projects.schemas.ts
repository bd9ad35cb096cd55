import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { ProjectsTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

export const PROJECT_TYPES = ['object_detection', 'instance_segmentation', 'classification', 'semantic_segmentation', 'keypoint_detection', 'oriented_detection'] as const;
export const ProjectType = StringEnum(PROJECT_TYPES);

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Description = Type.String({ maxLength: 10_000 });
const Location = Type.String({ maxLength: 500 });
const OrgId = Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'The organization the project belongs to (its owners and admins manage it); you must be an owner or admin of it' }));
const AssignedOnly = Type.Boolean({ description: 'Annotators see and edit only the images assigned to them' });
const MultiLabel = Type.Boolean({
  description: 'Classification: an image may hold several classes (a class key in the editor toggles one); false (the default): one class per image (a class key replaces it)',
});

export const ProjectCreate = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    project_type: Type.Optional(ProjectType),
    location: Type.Optional(Location),
    org_id: Type.Optional(OrgId),
    assigned_only: Type.Optional(AssignedOnly),
    multi_label: Type.Optional(MultiLabel),
  },
  { additionalProperties: false },
);
export type ProjectCreate = Static<typeof ProjectCreate>;

export const ProjectUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    project_type: Type.Optional(ProjectType),
    location: Type.Optional(Location),
    org_id: Type.Optional(OrgId),
    assigned_only: Type.Optional(AssignedOnly),
    multi_label: Type.Optional(MultiLabel),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type ProjectUpdate = Static<typeof ProjectUpdate>;

export const ProjectOut = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  project_type: ProjectType,
  location: Type.String(),
  owner_id: Type.Integer(),
  org_id: Nullable(Type.Integer()),
  assigned_only: AssignedOnly,
  multi_label: MultiLabel,
  created_at: Timestamp,
  updated_at: Timestamp,
  image_count: Type.Integer(),
  annotated_image_count: Type.Integer(),
  annotation_count: Type.Integer(),
  class_count: Type.Integer(),
  sample_count: Type.Integer({ description: 'Text, tabular, audio, video and LLM samples' }),
  labelled_sample_count: Type.Integer({ description: 'Samples with a label, spans or a value' }),
});
export type ProjectOut = Static<typeof ProjectOut>;

export const BulkDeleteBody = Type.Object({ ids: Type.Array(Id, { minItems: 1, maxItems: 1000 }) }, { additionalProperties: false });
export const BulkDeleteOut = Type.Object({
  deleted: Type.Integer(),
  not_found: Type.Array(Type.Integer(), { description: 'Requested ids that do not exist or that you may not delete' }),
});

export type ProjectRow = Selectable<ProjectsTable>;

export function toProjectOut(row: ProjectRow): ProjectOut {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    project_type: row.project_type as ProjectOut['project_type'],
    location: row.location,
    owner_id: row.owner_id,
    org_id: row.org_id,
    assigned_only: row.assigned_only === 1,
    multi_label: row.multi_label === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
    image_count: row.image_count,
    annotated_image_count: row.annotated_image_count,
    annotation_count: row.annotation_count,
    class_count: row.class_count,
    sample_count: row.sample_count,
    labelled_sample_count: row.labelled_sample_count,
  };
}
