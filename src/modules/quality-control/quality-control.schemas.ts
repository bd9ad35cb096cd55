import { Type, type Static } from 'typebox';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { AnnotationType } from '../annotations/annotations.schemas.js';

export const SettingsOut = Type.Object({
  overlap: Type.Integer({ description: 'Annotators per image of the overlap pool (1: no overlap)' }),
  ground_truth_share: Type.Number({ description: 'Share of dealt tasks that are hidden ground-truth images' }),
  agreement_threshold: Type.Number({ description: 'Images whose agreement (mean pairwise F1) is below this wait in the disagreement queue' }),
  annotators_see_scores: Type.Boolean({ description: 'Annotators may read their own scores (`GET …/quality-control/my-scores`)' }),
  ground_truth_in_training: Type.Boolean({ description: 'Ground-truth images may enter versions (training splits); by default they are left out' }),
});
export type SettingsOut = Static<typeof SettingsOut>;

export const SettingsUpdate = Type.Object(
  {
    overlap: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
    ground_truth_share: Type.Optional(Type.Number({ minimum: 0, maximum: 0.5 })),
    agreement_threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    annotators_see_scores: Type.Optional(Type.Boolean()),
    ground_truth_in_training: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type SettingsUpdate = Static<typeof SettingsUpdate>;

export const QcShape = Type.Object(
  {
    class_id: Id,
    annotation_type: AnnotationType,
    geometry: Type.Object({}, { additionalProperties: true, description: 'As an annotation\'s geometry (see the annotations routes)' }),
    track_id: Type.Optional(Id),
    keyframe: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    description: 'On a video\'s frame, a shape with `track_id` belongs to one of your task\'s tracks (ids of your own, never the '
      + 'video\'s tracks): `keyframe: true` (the default on a save) makes it the track\'s keyframe on this frame; a task read '
      + 'gives every frame the shapes interpolated between your keyframes with `keyframe: false`, which a save leaves as they are.',
  },
);
export type QcShape = Static<typeof QcShape>;
const Shapes = Type.Array(QcShape, { maxItems: 5000 });

export const GroundTruthMark = Type.Object({ image_ids: Type.Array(Id, { minItems: 1, maxItems: 1000 }) }, { additionalProperties: false });
export type GroundTruthMark = Static<typeof GroundTruthMark>;

export const GroundTruthOut = Type.Object({
  image_id: Type.Integer(),
  shapes: Type.Array(QcShape, { description: 'The reviewed labels frozen when the image was marked' }),
  marked_by: Nullable(Type.Integer()),
  created_at: Timestamp,
});
export type GroundTruthOut = Static<typeof GroundTruthOut>;

export const ImageTaskParams = Type.Object({ id: Id, image_id: Id });

/**
 * A task as its annotator sees it. Ground-truth images and overlap images answer the same fields, in the same
 * order of dealing, with the same kind of ids: nothing here tells them apart.
 */
export const TaskOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  image_id: Type.Integer(),
  width: Type.Integer(),
  height: Type.Integer(),
  video_id: Nullable(Type.Integer({ description: 'The video the image is a frame of: your tasks on its frames are one task set (one timeline, submitted together)' })),
  frame: Nullable(Type.Integer()),
  status: StringEnum(['open', 'submitted'] as const),
  shapes: Type.Array(QcShape, { description: 'Your own version of the image (others never see it)' }),
  active_seconds: Type.Number({ description: 'Active editing time: the gaps between your saves, each counted up to 120 s' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  submitted_at: Nullable(Timestamp),
  review_state: Nullable(StringEnum(['pending', 'accepted', 'changes_requested'] as const, {
    description: 'The review of your submission: null until you submit; `pending` waits for a reviewer; `accepted`; `changes_requested` gives the task back to you (open again) to rework and resubmit',
  })),
  review_comment: Nullable(Type.String({ description: 'The last reviewer\'s comment on your submission' })),
  review_round: Type.Integer({ description: 'How many reviews were decided on this task' }),
});
export type TaskOut = Static<typeof TaskOut>;

export const TaskTrackOut = Type.Object({
  id: Type.Integer({ description: 'Your task\'s own track id' }),
  class_id: Type.Integer(),
  keyframes: Type.Array(
    Type.Object({ frame: Type.Integer(), annotation_type: AnnotationType, geometry: Type.Object({}, { additionalProperties: true }), outside: Type.Boolean() }),
    { description: 'By frame; an `outside` keyframe hides the track from there (a track shape left out of a save)' },
  ),
});
export type TaskTrackOut = Static<typeof TaskTrackOut>;

export const TaskReviewDecision = StringEnum(['accepted', 'changes_requested'] as const, { description: '`changes_requested` rejects the submission: the task goes back to its annotator' });

/** A video frame of a pending task set with the annotator's version there. */
export const PendingTaskFrameOut = Type.Object({
  task_id: Type.Integer(),
  image_id: Type.Integer(),
  frame: Type.Integer(),
  shapes: Type.Array(QcShape, { description: 'The annotator\'s submitted version of the frame: plain shapes and their task tracks\' shapes there (keyframes and interpolated)' }),
});

/**
 * A submission waiting for its review, as a reviewer opens it: an image's task, or an annotator's whole task set on
 * a video (reviewed as one, as it is submitted as one), shown by one of its frames.
 */
export const PendingTaskReviewOut = Type.Object({
  task_id: Type.Integer({ description: 'The task shown (for a video\'s set, the frame shown); pages go by it (`after`)' }),
  image_id: Type.Integer({ description: 'The image shown; a decision on it (or on any frame of the set) decides the whole set' }),
  user_id: Type.Integer({ description: 'The annotator' }),
  email: Type.String(),
  display_name: Type.String(),
  width: Type.Integer(),
  height: Type.Integer(),
  video_id: Nullable(Type.Integer({ description: 'The video of a task set; null for an image not in a video' })),
  frame: Nullable(Type.Integer({ description: 'The frame shown: the first the annotator stored shapes on, else the set\'s first frame; null for an image' })),
  frames: Type.Integer({ description: 'How many images the decision covers: the set\'s pending frames, 1 for an image' }),
  video_frames: Type.Array(PendingTaskFrameOut, { description: 'Every pending frame of the set by frame, the one shown among them, to step through; empty for an image' }),
  shapes: Type.Array(QcShape, { description: 'The annotator\'s submitted version of the image shown (a frame\'s with their task tracks\' shapes there)' }),
  submitted_at: Nullable(Timestamp),
  round: Type.Integer({ description: '1 for a first submission, 2 and up for resubmissions after changes were requested' }),
  last_comment: Nullable(Type.String({ description: 'The comment of the change request this resubmission answers' })),
});
export type PendingTaskReviewOut = Static<typeof PendingTaskReviewOut>;

export const TaskReviewCreate = Type.Object(
  {
    image_id: { ...Id, description: 'The image of the task; any frame of a video\'s task set decides the whole set' },
    user_id: Id,
    decision: TaskReviewDecision,
    comment: Type.String({ maxLength: 4000, default: '', description: 'Required (not blank) when requesting changes' }),
  },
  { additionalProperties: false },
);
export type TaskReviewCreate = Static<typeof TaskReviewCreate>;

export const TaskReviewOut = Type.Object({
  id: Type.Integer(),
  task_id: Type.Integer({ description: 'The task named in the decision: one record per decision, a video\'s task set\'s on the frame named' }),
  image_id: Type.Integer(),
  user_id: Type.Integer({ description: 'The annotator' }),
  round: Type.Integer(),
  decision: TaskReviewDecision,
  comment: Type.String(),
  shapes: Type.Array(QcShape, { description: 'The version the decision was made on (of a set, the named frame\'s shapes as stored)' }),
  reviewed_by: Nullable(Type.Integer()),
  created_at: Timestamp,
});
export type TaskReviewOut = Static<typeof TaskReviewOut>;

export const TaskReviewQuery = Type.Object({
  image_id: Type.Optional(Id),
  user_id: Type.Optional(Id),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  after: Type.Optional(Type.Integer({ minimum: 0, description: 'The last id (task id when pending, review id otherwise) of the previous page' })),
});
export type TaskReviewQuery = Static<typeof TaskReviewQuery>;

export const NextOut = Type.Object({ task: Nullable(TaskOut) }, { description: '`task: null` when there is nothing to deal' });
export type NextOut = Static<typeof NextOut>;

export const TaskListQuery = Type.Object({
  user_id: Type.Optional(Id),
  video_id: Type.Optional(Id),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  after: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type TaskListQuery = Static<typeof TaskListQuery>;

export const TaskSave = Type.Object({ shapes: Shapes }, { additionalProperties: false });
export type TaskSave = Static<typeof TaskSave>;

export const AgreementQuery = Type.Object({
  below_threshold: Type.Optional(Type.Boolean()),
  limit: Type.Integer({ minimum: 1, maximum: 10_000, default: 500 }),
  after: Type.Optional(Type.Integer({ minimum: 0, description: 'The last image id of the previous page' })),
});
export type AgreementQuery = Static<typeof AgreementQuery>;

const ClassF1 = Type.Object({ class_id: Type.Integer(), f1: Type.Number() });

export const ImageAgreementOut = Type.Object({
  image_id: Type.Integer(),
  annotators: Type.Array(Type.Integer()),
  f1: Type.Number({ description: 'Mean pairwise F1 (IoU ≥ 0.5, Hungarian matching)' }),
  mean_iou: Nullable(Type.Number()),
  per_class: Type.Array(ClassF1),
  below_threshold: Type.Boolean(),
  decided: Type.Boolean({ description: 'A consensus decision was recorded for the image' }),
});
export type ImageAgreementOut = Static<typeof ImageAgreementOut>;

export const VersionOut = Type.Object({ user_id: Type.Integer(), shapes: Type.Array(QcShape), submitted_at: Nullable(Timestamp) });

export const DisagreementOut = Type.Object({
  image_id: Type.Integer(),
  f1: Type.Number(),
  versions: Type.Array(VersionOut, { description: 'Every submitted version, to overlay' }),
  proposal: Type.Array(QcShape, { description: 'What a merge would accept now' }),
});
export type DisagreementOut = Static<typeof DisagreementOut>;

export const ConsensusCreate = Type.Object(
  {
    image_id: Id,
    method: StringEnum(['merge', 'pick', 'edit'] as const, { default: 'merge', description: '`merge`: the weighted consensus of the submitted versions; `pick`: one annotator\'s version (`user_id`); `edit`: `shapes` as given' }),
    user_id: Type.Optional(Id),
    shapes: Type.Optional(Shapes),
  },
  { additionalProperties: false },
);
export type ConsensusCreate = Static<typeof ConsensusCreate>;

export const DecisionOut = Type.Object({
  id: Type.Integer(),
  image_id: Type.Integer(),
  method: StringEnum(['merge', 'pick', 'edit'] as const),
  picked_user_id: Nullable(Type.Integer()),
  agreement: Nullable(Type.Number()),
  before: Type.Array(QcShape, { description: 'The accepted labels the decision replaced' }),
  after: Type.Array(QcShape, { description: 'The accepted labels it wrote' }),
  weights: Type.Record(Type.String(), Type.Number(), { description: 'Each annotator\'s weight (ground-truth F1) in a merge' }),
  decided_by: Nullable(Type.Integer()),
  created_at: Timestamp,
});
export type DecisionOut = Static<typeof DecisionOut>;

const GroundTruthFiguresOut = Type.Object({
  images: Type.Integer(),
  precision: Nullable(Type.Number()),
  recall: Nullable(Type.Number()),
  f1: Nullable(Type.Number()),
  mean_iou: Nullable(Type.Number()),
  class_accuracy: Nullable(Type.Number()),
});

export const AnnotatorOut = Type.Object({
  user_id: Type.Integer(),
  email: Type.String(),
  display_name: Type.String(),
  tasks_submitted: Type.Integer(),
  active_seconds: Type.Integer(),
  seconds_per_image: Nullable(Type.Number()),
  objects: Type.Integer(),
  objects_per_hour: Nullable(Type.Number()),
  reviews_decided: Type.Integer(),
  rejection_rate: Nullable(Type.Number({ description: 'Rejected / decided reviews of their work: image reviews rejected, and task reviews that requested changes (a task review\'s one way to reject)' })),
  rework_rate: Nullable(Type.Number({ description: 'Changes requested / decided reviews, image reviews and task reviews together' })),
  ground_truth: GroundTruthFiguresOut,
  per_class: Type.Array(Type.Object({ class_id: Type.Integer(), tp: Type.Integer(), fp: Type.Integer(), fn: Type.Integer(), f1: Type.Number() })),
  agreement: Nullable(Type.Number({ description: 'Mean F1 against the other annotators of the same images' })),
  over_time: Type.Array(Type.Object({ day: Type.String(), images: Type.Integer(), f1: Type.Number() })),
});
export type AnnotatorOut = Static<typeof AnnotatorOut>;

export const MyScoresOut = Type.Object({
  visible: Type.Boolean({ description: 'false when the project does not show annotators their scores (then `scores` is null)' }),
  scores: Nullable(AnnotatorOut),
});
export type MyScoresOut = Static<typeof MyScoresOut>;
