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
  sha256?: string;
  created_at?: string;
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
