import type { ColumnType, Generated, GeneratedAlways } from 'kysely';
import { type ReviewState, type ReviewStatus } from '../lib/vocabulary.js';

/**
 * Table types. Timestamps are ISO-8601 text and booleans are 0/1 integers on both dialects, so rows read the same
 * everywhere; JSON documents are stored as text and parsed by the repositories.
 */
export interface UsersTable {
  id: Generated<number>;
  email: string;
  password_hash: string;
  display_name: string;
  is_admin: number;
  created_at: string;
}

export interface TokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  /** `session` tokens come from login (and back the cookie); `api` tokens are made by the user. */
  kind: 'session' | 'api';
  token_hash: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  /** `read-only` tokens may only send GET/HEAD/OPTIONS requests. */
  scope: ColumnType<TokenScope, TokenScope | undefined, TokenScope>;
}

export type TokenScope = 'read-only' | 'read-write';

export interface ProjectsTable {
  id: Generated<number>;
  owner_id: number;
  name: string;
  description: string;
  project_type: string;
  location: string;
  created_at: string;
  updated_at: string;
  image_count: ColumnType<number, number | undefined, number>;
  annotated_image_count: ColumnType<number, number | undefined, number>;
  annotation_count: ColumnType<number, number | undefined, number>;
  class_count: ColumnType<number, number | undefined, number>;
  /** The organization whose admins also manage the project. */
  org_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** 1: annotators see and edit only the images assigned to them. */
  assigned_only: ColumnType<number, number | undefined, number>;
  /** `importing` while an import writes it (hidden from every reader), else `ready`. */
  status: ColumnType<'ready' | 'importing', 'ready' | 'importing' | undefined, 'ready' | 'importing'>;
  sample_count: ColumnType<number, number | undefined, number>;
  /** Samples with a label, spans or a value. */
  labelled_sample_count: ColumnType<number, number | undefined, number>;
  /** Classification: 1 when an image may hold several classes, 0 for one class per image (migration 0042). */
  multi_label: ColumnType<number, number | undefined, number>;
}

export interface ClassesTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  color: string;
  created_at: string;
  /** JSON text of the keypoint skeleton (class-specs.ts), null when the class has none (migration 0027). */
  skeleton: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON text of the attribute specs, null when the class declares none (migration 0027). */
  attributes: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON text of the modalities the class is for, null for every modality (migration 0044). */
  modalities: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ImagesTable {
  id: Generated<number>;
  project_id: number;
  filename: string;
  original_name: string;
  width: number;
  height: number;
  split: string | null;
  sha256: string;
  mime_type: string;
  size_bytes: number;
  blob_key: string;
  thumbnail_key: string;
  annotation_count: ColumnType<number, number | undefined, number>;
  created_at: string;
  review_state: ColumnType<ReviewState, ReviewState | undefined, ReviewState>;
  /** The video this image is a frame of, its 0-based frame number and timestamp; null for an uploaded image (migration 0029). */
  video_id: ColumnType<number | null, number | null | undefined, number | null>;
  frame: ColumnType<number | null, number | null | undefined, number | null>;
  timestamp_s: ColumnType<number | null, number | null | undefined, number | null>;
}

export type VideoStatus = 'decoding' | 'ready' | 'failed';

/** A video of an image project, decoded into frames by a job (migration 0029). */
export interface VideosTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  sha256: string;
  mime_type: string;
  size_bytes: number;
  blob_key: string;
  fps: number;
  frame_count: number;
  width: number;
  height: number;
  duration_s: number;
  start_s: number;
  /** Every `step`-th frame is decoded. */
  step: number;
  status: VideoStatus;
  error: string | null;
  job_id: number | null;
  created_by: number | null;
  created_at: string;
  /** The clip that was decoded, seconds from the video's start; null: all of it (migration 0034). */
  range_start_s: ColumnType<number | null, number | null | undefined, number | null>;
  range_end_s: ColumnType<number | null, number | null | undefined, number | null>;
  /** The video sample it was made from, when it was (migration 0034). */
  source_sample_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** JSON text `[{start_s, end_s, label}]`: the sample's time segments, classifications of the frames they cover. */
  segments: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An object with one identity across a video's frames (migration 0030). */
export interface TracksTable {
  id: Generated<number>;
  project_id: number;
  video_id: number;
  class_id: number;
  /** JSON text `{name: value}`, null when none. */
  attributes: string | null;
  created_at: string;
  updated_at: string;
}

export interface TrackKeyframesTable {
  track_id: number;
  frame: number;
  annotation_type: string;
  /** JSON text. */
  geometry: string;
  outside: number;
  occluded: number;
}

/** A track proposed by a detector and the tracker, until accepted (a track) or rejected (deleted). */
export interface TrackSuggestionsTable {
  id: Generated<number>;
  project_id: number;
  video_id: number;
  class_id: number;
  /** `model:<id>`: a re-run of the model over the same frames replaces its open suggestions there. */
  source: string;
  /** Mean detection score over the track's frames. */
  score: number;
  first_frame: number;
  last_frame: number;
  /** JSON text `[[frame, x, y, width, height, score], …]` by frame. */
  boxes: string;
  created_at: string;
}

/** Where an image stands in the review loop: never submitted, waiting, or the last decision. */
export type { ReviewState } from '../lib/vocabulary.js';

export interface AnnotationsTable {
  id: Generated<number>;
  image_id: number;
  project_id: number;
  class_id: number;
  annotation_type: string;
  /** JSON text. */
  geometry: string;
  confidence: number | null;
  source: string;
  /** `accepted` (a person drew or accepted it) or `suggested` (model output awaiting a person's decision). */
  status: Generated<'accepted' | 'suggested'>;
  created_at: string;
  updated_at: string;
  /** JSON text `{name: value}` of attribute values, null when none (migration 0027). */
  attributes: ColumnType<string | null, string | null | undefined, string | null>;
  /** Shapes with the same group id in one image are one object (migration 0027). */
  group_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** A bbox's or a mask's box, computed by the database from `geometry` (migration 0017); null for other types. */
  box_x: GeneratedAlways<number | null>;
  box_y: GeneratedAlways<number | null>;
  box_w: GeneratedAlways<number | null>;
  box_h: GeneratedAlways<number | null>;
}

export interface JobsTable {
  id: Generated<number>;
  name: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  progress: number;
  message: Generated<string | null>;
  eta_seconds: Generated<number | null>;
  /** 1 once cancel was asked for: the process running the job polls it and aborts the job's signal. */
  cancel_requested: Generated<number>;
  /** JSON text. */
  payload: string;
  /** JSON text. */
  result: string | null;
  error: string | null;
  project_id: number | null;
  created_by: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface ModelsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  format: string;
  task: string;
  input_width: number | null;
  input_height: number | null;
  /** JSON text: an array of names in class-index order. */
  class_names: string;
  size_bytes: number;
  sha256: string;
  lifecycle: string;
  source: string;
  /** Where a model registered from a path or a training run lives; null for uploads. */
  path: string | null;
  /** Where an uploaded model's bytes are stored; null for path-registered models. */
  blob_key: string | null;
  /** A Versa-trained model's trainer checkpoint in the store, what fine-tuning starts from (migration 0038). */
  checkpoint_key: Generated<string | null>;
  created_by: number | null;
  created_at: string;
  /** Set for models a Versa training run registered. */
  experiment_id: Generated<number | null>;
  /** The dataset version a trained model learnt from (not named version_id: models never block deleting a version). */
  trained_version_id: Generated<number | null>;
  /** JSON text: the run's final metrics. */
  metrics: Generated<string | null>;
  /** JSON text: class name → the F1-maximising confidence of its run, stored when promoted to production. */
  class_thresholds: Generated<string | null>;
}

export interface ModelLifecycleEventsTable {
  id: Generated<number>;
  model_id: number;
  from_lifecycle: string | null;
  to_lifecycle: string;
  changed_by: number | null;
  changed_at: string;
  reason: string | null;
}

export interface ExperimentsTable {
  id: Generated<number>;
  project_id: number;
  /** The dataset version trained on; blocks deleting that version while the experiment exists. */
  version_id: number | null;
  job_id: number | null;
  model_id: number | null;
  name: string;
  /** JSON text: string[]. */
  tags: string;
  notes: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  adapter: string;
  /** JSON text: every effective parameter. */
  params: string;
  /** JSON text: latest (while running) or final metrics. */
  metrics: string;
  /** JSON text: per-epoch rows. */
  history: string;
  /** JSON text: per-class rows. */
  per_class: string;
  /** JSON text: environment, artifacts, confusion matrix, recipe. */
  extra: string;
  best_epoch: number | null;
  epoch: number;
  error: string | null;
  run_dir: string | null;
  created_by: number | null;
  created_at: string;
  finished_at: string | null;
  duration_s: number | null;
  /** When the run was handed to the job queue; null while it waits for a training slot of its project. */
  admitted_at: string | null;
}

export type VersionStatus = 'pending' | 'generating' | 'ready' | 'failed';

export interface VersionsTable {
  id: Generated<number>;
  project_id: number;
  /** 1, 2, 3… per project. */
  number: number;
  name: string;
  notes: string;
  seed: number;
  /** JSON text: {train, valid, test} percentages. */
  split_config: string;
  /** JSON text: the full, defaulted preprocessing recipe. */
  preprocessing_config: string;
  /** JSON text: the full augmentation recipe (outputs_per_image 1 = off). */
  augmentation_config: string;
  status: VersionStatus;
  progress: ColumnType<number, number | undefined, number>;
  error: string | null;
  job_id: number | null;
  /** JSON text: {train, valid, test, total} output image counts. */
  image_counts: string;
  created_by: number | null;
  created_at: string;
  finished_at: string | null;
}

/** The project as it was when a version was created: one row per source image, annotations inline. */
export interface VersionSourcesTable {
  id: Generated<number>;
  version_id: number;
  source_image_id: number;
  split: string;
  filename: string;
  blob_key: string;
  sha256: string;
  width: number;
  height: number;
  /** JSON text: [{class_name, annotation_type, geometry, attributes?, group_id?}] in source pixels, tracks' shapes included. */
  annotations: string;
  /** The video the image is a frame of and its frame number (migration 0033); null for other images. */
  video_id: ColumnType<number | null, number | null | undefined, number | null>;
  frame: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface VersionImagesTable {
  id: Generated<number>;
  version_id: number;
  split: string;
  /** Unique per version. Blob key: projects/{pid}/versions/{number}/{split}/{filename}. */
  filename: string;
  blob_key: string;
  width: number;
  height: number;
  /** No foreign key: the source image may be deleted later; the version keeps the id. */
  source_image_id: number | null;
  /** JSON text: the step list applied to the source. */
  lineage: string;
  sha256: string;
  /** The source's video and frame, on its only output (migration 0033); null otherwise. */
  video_id: ColumnType<number | null, number | null | undefined, number | null>;
  frame: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface VersionAnnotationsTable {
  id: Generated<number>;
  version_image_id: number;
  class_name: string;
  class_index: number;
  annotation_type: string;
  /** JSON text in output pixels; masks as RLE. */
  geometry: string;
  /** JSON text `{name: value}`; null when the annotation has no attribute values. */
  attributes: string | null;
  group_id: number | null;
}

export interface VersionClassesTable {
  version_id: number;
  index: number;
  name: string;
  color: string;
  /** JSON text: the class's keypoint skeleton / attribute specs as it had them when the version was made; null when none. */
  skeleton: string | null;
  attributes: string | null;
}

/** The last version number handed out per project (numbers are never reused). */
export interface VersionCountersTable {
  project_id: number;
  last_number: number;
}

/** Perceptual-hash cache (grouped splits); valid while sha256 matches the image's. */
export interface ImagePhashesTable {
  image_id: number;
  sha256: string;
  /** 64-bit dHash as 16 hex digits. */
  dhash: string;
  /** 256-bit dHash (16 × 16) as 64 hex digits, confirming the 64-bit hash's near duplicates; null until measured. */
  fine: Generated<string | null>;
}

/** A finished export file (a blob under projects/{pid}/exports/), found by its unique filename. */
export interface ExportsTable {
  id: Generated<number>;
  project_id: number;
  version_id: number | null;
  format: string;
  filename: string;
  blob_key: string;
  size_bytes: number;
  image_count: number;
  annotation_count: number;
  include_unannotated: number;
  created_by: number | null;
  created_at: string;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface OrgsTable {
  id: Generated<number>;
  name: string;
  created_by: number | null;
  created_at: string;
}

export interface OrgMembersTable {
  org_id: number;
  user_id: number;
  role: 'owner' | 'admin' | 'member';
  created_at: string;
}

export interface ProjectMembersTable {
  project_id: number;
  user_id: number;
  /** Any project role but `owner` (the owner is the project's owner_id). */
  role: 'admin' | 'reviewer' | 'annotator' | 'viewer';
  created_at: string;
}

export interface InvitationsTable {
  id: Generated<number>;
  project_id: number;
  email: string;
  role: 'admin' | 'reviewer' | 'annotator' | 'viewer';
  token_hash: string;
  /** The link's secret sealed with SECRETS_KEY (lib/secret-box.ts), null without one (migration 0043). */
  token_sealed: ColumnType<string | null, string | null | undefined, string | null>;
  invited_by: number | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: number | null;
}

export interface AssignmentsTable {
  id: Generated<number>;
  project_id: number;
  image_id: number;
  user_id: number;
  assigned_by: number | null;
  created_at: string;
}

export interface ReviewsTable {
  id: Generated<number>;
  project_id: number;
  image_id: number;
  submitted_by: number | null;
  comment: ColumnType<string, string | undefined, string>;
  status: ReviewStatus;
  decided_by: number | null;
  decided_at: string | null;
  decision_comment: ColumnType<string, string | undefined, string>;
  created_at: string;
}

export interface ImageLocksTable {
  image_id: number;
  user_id: number;
  acquired_at: string;
  expires_at: string;
}

export interface RevisionsTable {
  id: Generated<number>;
  annotation_id: number;
  image_id: number;
  project_id: number;
  action: 'create' | 'update' | 'delete' | 'revert';
  /** JSON text of the annotation's fields before and after; null where it did not exist. */
  before: string | null;
  after: string | null;
  user_id: number | null;
  created_at: string;
}

/** Per-image quality features, measured once from the thumbnail; valid while sha256 matches the image's. */
export interface ImageFeaturesTable {
  image_id: number;
  sha256: string;
  /** 0 when the image cannot be decoded. */
  readable: number;
  /** 1 when the original file lacks its format's end marker (a cut-off JPEG or PNG). */
  truncated: number;
  /** Variance of the Laplacian of the grey fitted pixels (src/imaging/fitted-pixels.ts): low is blurry. */
  blur: number;
  /** Mean grey level, 0–255. */
  brightness: number;
  /** Shannon entropy of the grey histogram, 0–8 bits. */
  entropy: number;
  /** 1 when every pixel's channels are (nearly) equal. */
  grayscale: number;
  /** SHA-1 of the thumbnail's decoded pixels: equal for the same picture in different encodings. */
  pixel_hash: string;
}

export type CleaningRunStatus = 'applied' | 'reverted' | 'expired';

export interface CleaningRunsTable {
  id: Generated<number>;
  project_id: number;
  user_id: number | null;
  /** JSON text: the actions as requested, with their defaulted params. */
  actions: string;
  /** JSON text: {change kind: count}. */
  summary: string;
  status: CleaningRunStatus;
  created_at: string;
  /** After this the run can no longer be reverted and the blobs of the images it deleted are removed. */
  revertible_until: string;
  reverted_at: string | null;
  reverted_by: number | null;
}

/** One row a cleaning run changed: its state before and after (JSON text; null where it did not exist). */
export interface CleaningRunRecordsTable {
  id: Generated<number>;
  run_id: number;
  kind: 'image' | 'annotation' | 'class';
  ref_id: number;
  before: string | null;
  after: string | null;
}

export type SampleModality = 'text' | 'tabular' | 'audio' | 'video' | 'llm';

export interface SamplesTable {
  id: Generated<number>;
  project_id: number;
  modality: SampleModality;
  split: string | null;
  /** JSON text: the modality's content ({text}, {row}, {file, duration_s, …}, {prompt, …}). */
  data: string;
  /** The single class name, or the first of a multi-label sample. */
  label: string | null;
  /** JSON text: every class name of a multi-label sample; null for single-label ones. */
  labels: string | null;
  /** JSON text: character spans (text) or time segments (audio, video). */
  spans: string | null;
  /** JSON text: regression target, transcript or LLM rating/preference. */
  value: string | null;
  /** JSON text. */
  metadata: string | null;
  /** 1 when the sample has a label, spans or a value (the project's labelled counter counts these). */
  labelled: ColumnType<number, number | undefined, number>;
  /** Media samples: the stored bytes (content-addressed) and their hash. */
  blob_key: string | null;
  sha256: string | null;
  review_state: ColumnType<ReviewState, ReviewState | undefined, ReviewState>;
  /** The one member the sample is assigned to (assigned-only projects show annotators only theirs). */
  assignee_id: number | null;
  /** The last review decision: its comment, who and when. */
  review_comment: string | null;
  reviewed_by: number | null;
  reviewed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface SampleLocksTable {
  sample_id: number;
  user_id: number;
  acquired_at: string;
  expires_at: string;
}

export type SampleRevisionAction = 'update' | 'assign' | 'submit' | 'review';

export interface SampleRevisionsTable {
  id: Generated<number>;
  sample_id: number;
  project_id: number;
  action: SampleRevisionAction;
  /**
   * JSON text before and after: {label, spans, value, split} for `update`, {assignee_id} for `assign`,
   * {review_state, review_comment} for `submit` and `review`.
   */
  before: string | null;
  after: string | null;
  user_id: number | null;
  created_at: string;
}

/** JSON text `schema`: for tabular, {target, task, columns: [[name, type]], classes}. */
export interface SampleSchemasTable {
  project_id: number;
  modality: SampleModality;
  schema: string;
}

/** Rows whose `revision` sums to a project part's data revision (migrations 0018, 0019). */
export interface ProjectRevisionsTable {
  project_id: number;
  /** An image part (image id >> PART_BITS) or PROJECT_PART (classes, samples). */
  part: number;
  /** PostgreSQL returns bigint as a string. */
  revision: ColumnType<number | string, number, number>;
}

/** A computed part of a project's profile, as JSON, with the revision of its part it was computed at (migration 0019). */
export interface ProfilePartsTable {
  project_id: number;
  part: number;
  /** PostgreSQL returns bigint as a string. */
  revision: ColumnType<number | string, number, number>;
  body: string;
}

export interface Database {
  users: UsersTable;
  tokens: TokensTable;
  projects: ProjectsTable;
  project_revisions: ProjectRevisionsTable;
  profile_parts: ProfilePartsTable;
  classes: ClassesTable;
  images: ImagesTable;
  videos: VideosTable;
  tracks: TracksTable;
  track_keyframes: TrackKeyframesTable;
  track_suggestions: TrackSuggestionsTable;
  annotations: AnnotationsTable;
  jobs: JobsTable;
  experiments: ExperimentsTable;
  settings: SettingsTable;
  models: ModelsTable;
  model_lifecycle_events: ModelLifecycleEventsTable;
  versions: VersionsTable;
  version_sources: VersionSourcesTable;
  version_images: VersionImagesTable;
  version_annotations: VersionAnnotationsTable;
  version_classes: VersionClassesTable;
  version_counters: VersionCountersTable;
  image_phashes: ImagePhashesTable;
  exports: ExportsTable;
  orgs: OrgsTable;
  org_members: OrgMembersTable;
  project_members: ProjectMembersTable;
  invitations: InvitationsTable;
  assignments: AssignmentsTable;
  reviews: ReviewsTable;
  image_locks: ImageLocksTable;
  revisions: RevisionsTable;
  image_features: ImageFeaturesTable;
  cleaning_runs: CleaningRunsTable;
  cleaning_run_records: CleaningRunRecordsTable;
  samples: SamplesTable;
  sample_locks: SampleLocksTable;
  sample_revisions: SampleRevisionsTable;
  sample_schemas: SampleSchemasTable;
  pipelines: PipelinesTable;
  pipeline_runs: PipelineRunsTable;
  pipeline_run_writes: PipelineRunWritesTable;
  project_storages: ProjectStoragesTable;
  storage_objects: StorageObjectsTable;
  login_failures: LoginFailuresTable;
  blob_claims: BlobClaimsTable;
  qc_settings: QcSettingsTable;
  qc_ground_truth: QcGroundTruthTable;
  qc_tasks: QcTasksTable;
  qc_task_reviews: QcTaskReviewsTable;
  qc_decisions: QcDecisionsTable;
  qc_queue: QcQueueTable;
  qc_sample_queue: QcSampleQueueTable;
  qc_sample_ground_truth: QcSampleGroundTruthTable;
  qc_sample_tasks: QcSampleTasksTable;
  qc_sample_task_reviews: QcSampleTaskReviewsTable;
}

/** A project's labelling quality control settings (issue 29, migration 0035); a project without a row has the defaults. */
export interface QcSettingsTable {
  project_id: number;
  /** How many annotators label each image of the overlap pool (1: no overlap). */
  overlap: number;
  /** The share of dealt tasks that are (hidden) ground-truth images. */
  ground_truth_share: number;
  /** Images whose agreement (mean pairwise F1) is below this go to the disagreement queue. */
  agreement_threshold: number;
  annotators_see_scores: number;
  /** 1: ground-truth images may enter training splits (versions); 0: they are left out. */
  ground_truth_in_training: number;
  updated_at: string;
  /** The highest image id put in the overlap queue so far (migration 0040); later uploads join at the next deal. */
  queued_through: ColumnType<number, number | undefined, number>;
  /** The same for samples (migration 0047). */
  samples_queued_through: ColumnType<number, number | undefined, number>;
}

/** A ground-truth sample: its reviewed class and spans (JSON text) frozen when it was marked (migration 0041). */
export interface QcSampleGroundTruthTable {
  sample_id: number;
  project_id: number;
  /** The single class, or the first of several (as samples.label). */
  label: string | null;
  /** JSON text: every class of a multi-label sample; null otherwise (migration 0051). */
  labels: ColumnType<string | null, string | null | undefined, string | null>;
  spans: string | null;
  /** JSON text: the reviewed value (regression target, transcript, LLM rating/preference); migration 0051. */
  value: ColumnType<string | null, string | null | undefined, string | null>;
  marked_by: number | null;
  created_at: string;
}

/** One annotator's own answer on a sample dealt to them: a class and spans (JSON text), either may be null. */
export interface QcSampleTasksTable {
  id: Generated<number>;
  project_id: number;
  sample_id: number;
  user_id: number;
  /** The single class, or the first of several (as samples.label). */
  label: string | null;
  /** JSON text: every class of a multi-label answer; null otherwise (migration 0051). */
  labels: ColumnType<string | null, string | null | undefined, string | null>;
  spans: string | null;
  /** JSON text: the answer's value (regression target, transcript, LLM rating/preference); migration 0051. */
  value: ColumnType<string | null, string | null | undefined, string | null>;
  status: 'open' | 'submitted';
  created_at: string;
  updated_at: string;
  submitted_at: string | null;
  /** Where the answer's review stands, as qc_tasks.review_state (migration 0052). */
  review_state: ColumnType<QcReviewState | null, QcReviewState | null | undefined, QcReviewState | null>;
  review_comment: ColumnType<string | null, string | null | undefined, string | null>;
  review_round: ColumnType<number, number | undefined, number>;
}

/** A reviewer's decision on a submitted sample task (migration 0052), with the answer (JSON text as the task's) it was made on. */
export interface QcSampleTaskReviewsTable {
  id: Generated<number>;
  project_id: number;
  task_id: number;
  sample_id: number;
  user_id: number;
  round: number;
  decision: 'accepted' | 'changes_requested';
  comment: string;
  label: string | null;
  labels: string | null;
  spans: string | null;
  value: string | null;
  reviewed_by: number | null;
  created_at: string;
}

/** An image that may still be dealt, with its stored shuffle key (the dealing order; migration 0040). */
export interface QcQueueTable {
  image_id: number;
  project_id: number;
  shuffle_key: number;
}

/** The overlap queue of samples (migration 0047), as qc_queue for images. */
export interface QcSampleQueueTable {
  sample_id: number;
  project_id: number;
  shuffle_key: number;
}

/** A ground-truth image: the reviewed labels frozen when it was marked (JSON text of [{class_id, annotation_type, geometry}]). */
export interface QcGroundTruthTable {
  image_id: number;
  project_id: number;
  shapes: string;
  marked_by: number | null;
  created_at: string;
}

/** One annotator's own version of an image dealt to them (overlap or ground truth: nothing tells them apart). */
export interface QcTasksTable {
  id: Generated<number>;
  project_id: number;
  image_id: number;
  user_id: number;
  /** JSON text of [{class_id, annotation_type, geometry}]. */
  shapes: string;
  status: 'open' | 'submitted';
  /** Active editing time: the gaps between the task's saves, each capped (see quality-control.service.ts). */
  active_ms: ColumnType<number, number | undefined, number>;
  saves: ColumnType<number, number | undefined, number>;
  created_at: string;
  updated_at: string;
  submitted_at: string | null;
  /** Where the submission's review stands (migration 0049): null while never submitted; `pending` waits for a reviewer. */
  review_state: ColumnType<QcReviewState | null, QcReviewState | null | undefined, QcReviewState | null>;
  /** The last reviewer's comment (kept when changes were requested, so the annotator reads it while reworking). */
  review_comment: ColumnType<string | null, string | null | undefined, string | null>;
  /** How many reviews were decided on the task. */
  review_round: ColumnType<number, number | undefined, number>;
}

export type QcReviewState = 'pending' | 'accepted' | 'changes_requested';

/** A reviewer's decision on a submitted task (issue 29, migration 0049), with the version (JSON text) it was made on. */
export interface QcTaskReviewsTable {
  id: Generated<number>;
  project_id: number;
  task_id: number;
  image_id: number;
  /** The task's annotator. */
  user_id: number;
  /** 1 for the first review of the task, 2 for the review of its first resubmission, … */
  round: number;
  decision: 'accepted' | 'changes_requested';
  comment: string;
  shapes: string;
  reviewed_by: number | null;
  created_at: string;
}

/** A consensus decision on an image: how it was made and the accepted labels before and after (JSON text). */
export interface QcDecisionsTable {
  id: Generated<number>;
  project_id: number;
  image_id: number;
  method: 'merge' | 'pick' | 'edit';
  picked_user_id: number | null;
  agreement: number | null;
  before: string;
  after: string;
  decided_by: number | null;
  created_at: string;
}

/** Failed logins per throttle key (migration 0037): failures in a row and when the last one was, in ms since 1970. */
export interface LoginFailuresTable {
  key: string;
  count: number;
  /** PostgreSQL returns bigint as a string. */
  last_ms: ColumnType<number | string, number, number>;
}

/** Claims on content-addressed blobs (migration 0046): who writes or deletes a key now, until when (ms since 1970). */
export interface BlobClaimsTable {
  blob_key: string;
  holder: string;
  kind: 'write' | 'delete';
  /** PostgreSQL returns bigint as a string. */
  expires_ms: ColumnType<number | string, number, number>;
}

export interface PipelinesTable {
  id: Generated<number>;
  /** The owner: a project, or an organization (`org_id`); neither: its creator alone. */
  project_id: number | null;
  org_id: ColumnType<number | null, number | null | undefined, number | null>;
  name: string;
  description: string;
  /** JSON text of the definition `{name, description?, steps}`. */
  definition: string;
  yaml_source: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export type PipelineRunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface PipelineRunsTable {
  id: Generated<number>;
  pipeline_id: number;
  project_id: number;
  version_id: number | null;
  status: PipelineRunStatus;
  /** JSON text: the definition as it was when the run started. */
  definition: string;
  /** JSON text: per-step status, timings, counts and outputs. */
  steps: string;
  /** JSON text. */
  outputs: ColumnType<string, string | undefined, string>;
  error: string | null;
  progress: ColumnType<number, number | undefined, number>;
  eta_seconds: number | null;
  job_id: number | null;
  created_by: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** One record a run wrote: `kind` is annotation, review, version or export. */
export interface PipelineRunWritesTable {
  run_id: number;
  step_id: string;
  kind: string;
  object_id: number;
}

export type StoragePurpose = 'source' | 'target';
export type StorageImportMode = 'reference' | 'copy';

/** An S3-compatible bucket + prefix attached to a project (migration 0031, issue 27). */
export interface ProjectStoragesTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  /** `source`: images are imported from it; `target`: exports and version files are written to it. */
  purpose: StoragePurpose;
  endpoint: string;
  region: string;
  force_path_style: number;
  bucket: string;
  /** Without slashes at either end; '' for the whole bucket. */
  prefix: string;
  /** `{"accessKeyId","secretAccessKey"}` sealed with SECRETS_KEY (src/lib/secret-box.ts); never sent to a client. */
  credentials: string;
  /** The access key id's last four characters, to tell keys apart. */
  access_key_hint: string;
  import_mode: StorageImportMode;
  sync_interval_minutes: number | null;
  next_sync_at: string | null;
  /** The latest sync job (queued, running or finished). */
  sync_job_id: number | null;
  /** Syncs begun: each marks the objects it lists with its number, so the ones left unmarked went missing. */
  sync_count: ColumnType<number, number | undefined, number>;
  last_sync_at: string | null;
  last_sync_status: 'succeeded' | 'failed' | null;
  last_sync_error: string | null;
  /** The last finished sync's counts (JSON: listed, new, changed, missing, duplicates, rejected, skipped). */
  last_sync: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export type StorageObjectOutcome = 'imported' | 'duplicate' | 'rejected' | 'skipped';

/** An object a source storage's sync has seen (migration 0031). */
export interface StorageObjectsTable {
  id: Generated<number>;
  storage_id: number;
  object_key: string;
  etag: string;
  size_bytes: number;
  outcome: StorageObjectOutcome;
  detail: string | null;
  image_id: number | null;
  seen_sync: number;
  imported_at: string;
  /** When a sync first no longer listed it; null while it is there. */
  missing_since: string | null;
}
