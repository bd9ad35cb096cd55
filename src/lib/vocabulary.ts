/**
 * The domain's fixed lists of names, defined once: schemas, SQL filters, readers, writers and the trainer's data
 * take them from here. The pages get the same lists generated into web/src/vocabulary.ts (`npm run api-types`).
 */

/** The dataset splits, in the order they are listed and written. */
export const SPLIT_NAMES = ['train', 'valid', 'test'] as const;
export type SplitName = (typeof SPLIT_NAMES)[number];

export const isSplitName = (value: unknown): value is SplitName => SPLIT_NAMES.includes(value as SplitName);

/** A review's status: waiting, or the reviewer's decision. */
export const REVIEW_STATUSES = ['pending', 'approved', 'rejected', 'changes'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

/** Where an image or a sample stands in the review loop: never submitted, or its last review's status. */
export const REVIEW_STATES = ['unreviewed', ...REVIEW_STATUSES] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];

/**
 * The project types (issue 25 adds keypoint and oriented detection). projects.schemas.ts, the dataset model and the
 * pages take them from here.
 */
export const PROJECT_TYPES = ['object_detection', 'instance_segmentation', 'classification', 'semantic_segmentation', 'keypoint_detection', 'oriented_detection'] as const;
export type ProjectTypeName = (typeof PROJECT_TYPES)[number];

/**
 * The annotation types each project type expects, the one it trains on first: readiness counts these as what there is
 * to learn from, and the editor picks its default tool from the first. Other types may still be stored (a polygon in a
 * detection project is a box to the detector).
 */
export const PROJECT_TYPE_SHAPES: Record<ProjectTypeName, readonly string[]> = {
  object_detection: ['bbox', 'polygon', 'mask'],
  instance_segmentation: ['polygon', 'mask'],
  classification: ['classification'],
  semantic_segmentation: ['polygon', 'mask'],
  keypoint_detection: ['keypoints'],
  oriented_detection: ['bbox'],
};
