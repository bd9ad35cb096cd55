export type ProjectType = 'object_detection' | 'instance_segmentation' | 'classification' | 'semantic_segmentation';

export interface User {
  id: number;
  email: string;
  display_name: string;
  is_admin?: boolean;
}

export interface Project {
  id: number;
  name: string;
  description: string;
  project_type: ProjectType;
  location: string;
  created_at: string;
  updated_at: string;
  image_count: number;
  annotated_image_count: number;
  annotation_count: number;
  class_count: number;
  sample_count?: number;
  labelled_sample_count?: number;
}

export interface LabelClass {
  id: number;
  project_id: number;
  name: string;
  color: string;
}

export type Split = 'train' | 'valid' | 'test';

export interface ImageRecord {
  id: number;
  project_id: number;
  filename: string;
  original_name: string;
  width: number;
  height: number;
  split: Split | null;
  annotation_count: number;
  review_state?: ReviewState;
  sha256?: string;
  created_at?: string;
}

export type ReviewState = 'unreviewed' | 'pending' | 'approved' | 'rejected' | 'changes';
export const REVIEW_STATES: ReviewState[] = ['unreviewed', 'pending', 'approved', 'rejected', 'changes'];

export type ProjectRole = 'owner' | 'admin' | 'reviewer' | 'annotator' | 'viewer';

export interface Role {
  name: ProjectRole;
  description: string;
  permissions: string[];
}

export interface Member {
  user_id: number;
  email: string;
  display_name: string;
  role: ProjectRole;
  created_at: string;
}

export type Decision = 'approve' | 'reject' | 'changes';

export interface Review {
  id: number;
  project_id: number;
  image_id: number;
  status: 'pending' | 'approved' | 'rejected' | 'changes';
  comment: string;
  submitted_by: number | null;
  decided_by: number | null;
  decided_at: string | null;
  decision_comment: string;
  created_at: string;
}

export interface Lock {
  image_id: number;
  user_id: number;
  email: string;
  display_name: string;
  acquired_at: string;
  expires_at: string;
}

export interface AnnotationState {
  class_id: number;
  annotation_type: string;
  geometry: Record<string, unknown>;
  confidence: number | null;
  source: string;
}

export interface Revision {
  id: number;
  annotation_id: number;
  image_id: number;
  action: 'create' | 'update' | 'delete' | 'revert';
  before: AnnotationState | null;
  after: AnnotationState | null;
  user_id: number | null;
  created_at: string;
}

export interface QueueItem {
  project_id: number;
  image_id: number;
  reason: 'assigned' | 'returned';
  assignment_id: number | null;
  review_state: ReviewState;
  annotation_count: number;
  review_comment: string | null;
}

export interface BboxGeometry {
  x: number;
  y: number;
  width: number;
  height: number;
}
export interface PolygonGeometry {
  points: [number, number][];
}
export interface Rle {
  size: [number, number];
  counts: number[];
}
export interface MaskGeometry {
  rle: Rle;
  bbox?: BboxGeometry;
}

export type AnnotationType = 'bbox' | 'polygon' | 'mask' | 'classification';

export interface Annotation {
  id: number;
  image_id: number;
  class_id: number;
  annotation_type: AnnotationType;
  geometry: BboxGeometry | PolygonGeometry | MaskGeometry | Record<string, never>;
  confidence: number | null;
  source: string;
}

export interface Stats {
  project_count: number;
  total_images: number;
  annotated_images: number;
  total_annotations: number;
}

export interface UploadResult {
  original_name: string;
  outcome: 'created' | 'duplicate' | 'rejected';
  status: number;
  detail?: string;
  image_id?: number;
}

export interface UploadResponse {
  images: ImageRecord[];
  results: UploadResult[];
  created: number;
  duplicates: number;
  rejected: number;
}

export type SampleModality = 'text' | 'tabular' | 'audio' | 'video' | 'llm';
export interface TextSpan { start: number; end: number; label: string }
export interface TimeSegment { start_s: number; end_s: number; label: string }
export interface LlmValue { rating?: number; preference?: 'chosen' | 'rejected' | 'tie' }
export interface Sample {
  id: number;
  project_id: number;
  modality: SampleModality;
  split: 'train' | 'valid' | 'test' | null;
  data: Record<string, any>;
  label: string | string[] | null;
  spans: (TextSpan | TimeSegment)[] | null;
  value: number | string | LlmValue | null;
  metadata: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
}
/** What a sample view may change; the page sends it as a PATCH. */
export type SamplePatch = Partial<Pick<Sample, 'label' | 'spans' | 'value' | 'split'>>;
