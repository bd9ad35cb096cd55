import { ConflictError } from '../../http/errors.js';

/** The project facts the single-label rule reads. */
export interface LabelMode {
  project_type: string;
  multi_label: number;
}

/** Another classification of an image: what a single-label write would add a second class to. */
export interface ImageClass {
  id: number;
  status: string;
  name: string;
}

/**
 * A single-label classification project (issue 30): each image holds at most one classification, a suggestion
 * included (it stands for the image's class until someone decides on it). Other project types, and multi-label
 * projects, may hold several.
 */
export function isSingleLabel(project: LabelMode): boolean {
  return project.project_type === 'classification' && project.multi_label === 0;
}

/**
 * The 409 a write gets when it would give an image of a single-label project a second class: a class is changed
 * with PUT (as the editor's class key does), not added.
 */
export function secondClassConflict(projectId: number, imageId: number, other: ImageClass): ConflictError {
  const what = other.status === 'suggested' ? 'a suggested class' : 'the class';
  return new ConflictError(
    `Project ${projectId} is single-label and image ${imageId} already has ${what} "${other.name}" (annotation ${other.id}): `
      + `change it with PUT /api/annotations/${other.id}, delete it first, or make the project multi-label`,
    { annotation_id: other.id },
  );
}
