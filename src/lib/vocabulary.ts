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
