import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { ProjectsTable } from '../../db/schema.js';
import { Id, StringEnum, Timestamp } from '../../http/schemas.js';

export const PROJECT_TYPES = ['object_detection', 'instance_segmentation', 'classification', 'semantic_segmentation'] as const;
export const ProjectType = StringEnum(PROJECT_TYPES);

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Description = Type.String({ maxLength: 10_000 });
const Location = Type.String({ maxLength: 500 });

export const ProjectCreate = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    project_type: Type.Optional(ProjectType),
    location: Type.Optional(Location),
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
  created_at: Timestamp,
  updated_at: Timestamp,
  image_count: Type.Integer(),
  annotated_image_count: Type.Integer(),
  annotation_count: Type.Integer(),
  class_count: Type.Integer(),
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
    created_at: row.created_at,
    updated_at: row.updated_at,
    image_count: row.image_count,
    annotated_image_count: row.annotated_image_count,
    annotation_count: row.annotation_count,
    class_count: row.class_count,
  };
}
