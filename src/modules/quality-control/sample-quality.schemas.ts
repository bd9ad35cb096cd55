import { Type, type Static } from 'typebox';
import { Id, Nullable, Timestamp } from '../../http/schemas.js';
import { Label, Modality, Value } from '../samples/samples.schemas.js';
import { TaskOut, TaskReviewDecision, TaskReviewQuery } from './quality-control.schemas.js';

const ClassName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
// Neither closes its properties: the validator would strip a time segment's fields while trying it as a text span.
// The service keeps the known fields of each.
export const QcTextSpan = Type.Object({
  start: Type.Integer({ minimum: 0, description: 'UTF-16 code unit offset into the text' }),
  end: Type.Integer({ minimum: 1 }),
  label: ClassName,
});
export const QcTimeSegment = Type.Object({
  start_s: Type.Number({ minimum: 0, description: 'Seconds from the start of the clip' }),
  end_s: Type.Number({ minimum: 0 }),
  label: ClassName,
});
const Spans = Nullable(Type.Array(Type.Union([QcTextSpan, QcTimeSegment]), { maxItems: 10_000, description: 'Text spans on a text; time segments on audio and video' }));

export const SampleGroundTruthMark = Type.Object({ sample_ids: Type.Array(Id, { minItems: 1, maxItems: 1000 }) }, { additionalProperties: false });
export type SampleGroundTruthMark = Static<typeof SampleGroundTruthMark>;

export const SampleGroundTruthOut = Type.Object({
  sample_id: Type.Integer(),
  label: Label,
  spans: Spans,
  value: Value,
  created_at: Timestamp,
});
export type SampleGroundTruthOut = Static<typeof SampleGroundTruthOut>;

export const SampleTaskParams = Type.Object({ id: Id, sample_id: Id });

export const SampleTaskOut = Type.Object({
  id: Type.Integer(),
  project_id: Type.Integer(),
  sample_id: Type.Integer(),
  status: Type.Union([Type.Literal('open'), Type.Literal('submitted')]),
  label: Label,
  spans: Spans,
  value: Value,
  created_at: Timestamp,
  updated_at: Timestamp,
  submitted_at: Nullable(Timestamp),
  review_state: TaskOut.properties.review_state,
  review_comment: TaskOut.properties.review_comment,
  review_round: TaskOut.properties.review_round,
});
export type SampleTaskOut = Static<typeof SampleTaskOut>;

export const SampleNextOut = Type.Object({ task: Nullable(SampleTaskOut) }, { description: '`task: null` when there is nothing to deal' });
export type SampleNextOut = Static<typeof SampleNextOut>;

export const SampleTaskSave = Type.Object({ label: Type.Optional(Label), spans: Type.Optional(Spans), value: Type.Optional(Value) }, { additionalProperties: false });
export type SampleTaskSave = Static<typeof SampleTaskSave>;

const Counts = Type.Object({ tp: Type.Integer(), fp: Type.Integer(), fn: Type.Integer() });
/** Agreement among annotators on the overlapped samples (sample-value-agreement.logic.ts); per annotator, theirs with the others. */
const ValueAgreement = {
  label_set_alpha: Nullable(Type.Number({ description: "Krippendorff's alpha of the multi-label class sets (Jaccard distance); null unless an answer holds two classes" })),
  value_alpha: Nullable(Type.Number({ description: "Krippendorff's alpha (interval) of the numeric (tabular) targets" })),
  rating_alpha: Nullable(Type.Number({ description: "Krippendorff's alpha (interval) of the LLM ratings" })),
  preference_alpha: Nullable(Type.Number({ description: "Krippendorff's alpha (nominal) of the LLM preferences" })),
  transcript_agreement: Nullable(Type.Number({ description: 'Mean over pairs of annotators of 1 − WER of their transcripts (edit distance over the longer one\'s words)' })),
};
export const SampleReportOut = Type.Object({
  annotators: Type.Array(Type.Object({
    user_id: Type.Integer(),
    samples: Type.Integer({ description: 'Ground-truth samples answered' }),
    class_accuracy: Nullable(Type.Number()),
    span_f1: Nullable(Type.Number({ description: 'Token-level F1, micro over the ground-truth texts' })),
    span_counts: Counts,
    segment_f1: Nullable(Type.Number({ description: 'F1 of time segments matched per class by IoU ≥ 0.5, micro over the ground-truth clips' })),
    segment_counts: Counts,
    segment_per_class: Type.Array(Type.Object({ label: Type.String(), tp: Type.Integer(), fp: Type.Integer(), fn: Type.Integer(), f1: Type.Number() })),
    label_jaccard: Nullable(Type.Number({ description: 'Mean Jaccard index of the class sets over the multi-label ground-truth samples' })),
    value_mae: Nullable(Type.Number({ description: 'Mean absolute error of the numeric (tabular regression) targets' })),
    preference_accuracy: Nullable(Type.Number({ description: "Share of LLM pairs where the answer prefers the truth's response (chosen, rejected or tie)" })),
    rating_mae: Nullable(Type.Number({ description: 'Mean absolute difference of the LLM ratings' })),
    transcript_wer: Nullable(Type.Number({ description: 'Word error rate of the audio transcripts, micro over the clips' })),
    class_alpha: Nullable(Type.Number({ description: "Their Krippendorff's alpha (nominal) of classes against the others' (pairs with them only, the project's expected disagreement)" })),
    ...ValueAgreement,
    reviews_decided: Type.Integer({ description: 'Task reviews decided on their answers' }),
    rejection_rate: Nullable(Type.Number({ description: 'Task reviews requesting changes / decided (as the images\' report)' })),
    rework_rate: Nullable(Type.Number({ description: 'Task reviews requesting changes / decided: each sends the answer back for rework' })),
  })),
  samples: Type.Array(Type.Object({
    sample_id: Type.Integer(),
    annotators: Type.Array(Type.Integer()),
    class_unanimous: Nullable(Type.Boolean()),
    span_alpha: Nullable(Type.Number({ description: "Krippendorff's alpha of the token labels" })),
  })),
  class_alpha: Nullable(Type.Number({ description: "Krippendorff's alpha (nominal) of the classes over the overlapped samples" })),
  span_alpha: Nullable(Type.Number({ description: "Krippendorff's alpha of the token labels over every overlapped text" })),
  ...ValueAgreement,
});
export type SampleReportOut = Static<typeof SampleReportOut>;

/** A submitted sample task waiting for its review (as PendingTaskReviewOut for images), with the sample's content. */
export const PendingSampleTaskReviewOut = Type.Object({
  task_id: Type.Integer(),
  sample_id: Type.Integer(),
  user_id: Type.Integer({ description: 'The annotator' }),
  email: Type.String(),
  display_name: Type.String(),
  modality: Modality,
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'The sample\'s content (a text\'s `text`, a row\'s values, …)' }),
  label: Label,
  spans: Spans,
  value: Value,
  submitted_at: Nullable(Timestamp),
  round: Type.Integer({ description: '1 for a first submission, 2 and up for resubmissions after changes were requested' }),
  last_comment: Nullable(Type.String({ description: 'The comment of the change request this resubmission answers' })),
});
export type PendingSampleTaskReviewOut = Static<typeof PendingSampleTaskReviewOut>;

export const SampleTaskReviewCreate = Type.Object(
  {
    sample_id: Id,
    user_id: Id,
    decision: TaskReviewDecision,
    comment: Type.String({ maxLength: 4000, default: '', description: 'Required (not blank) when requesting changes' }),
  },
  { additionalProperties: false },
);
export type SampleTaskReviewCreate = Static<typeof SampleTaskReviewCreate>;

export const SampleTaskReviewOut = Type.Object({
  id: Type.Integer(),
  task_id: Type.Integer(),
  sample_id: Type.Integer(),
  user_id: Type.Integer({ description: 'The annotator' }),
  round: Type.Integer(),
  decision: TaskReviewDecision,
  comment: Type.String(),
  label: Label,
  spans: Spans,
  value: Value,
  reviewed_by: Nullable(Type.Integer()),
  created_at: Timestamp,
});
export type SampleTaskReviewOut = Static<typeof SampleTaskReviewOut>;

export const SampleTaskReviewQuery = Type.Object({
  sample_id: Type.Optional(Id),
  user_id: TaskReviewQuery.properties.user_id,
  limit: TaskReviewQuery.properties.limit,
  after: TaskReviewQuery.properties.after,
});
export type SampleTaskReviewQuery = Static<typeof SampleTaskReviewQuery>;
