/** A registered model as GET /api/projects/{id}/models lists it. */
export interface Model {
  id: number;
  name: string;
  format: string;
  task: string;
  input_size: { width: number; height: number } | null;
  class_names: string[];
  size_bytes: number;
  lifecycle: 'development' | 'staging' | 'production' | 'archived';
  source: string;
  created_at: string;
  /** Another project's production model this project can use (listed with include_shared), and its class match. */
  shared?: { project_id: number; project_name: string; matched: string[]; unmatched: string[] };
}

/** The project's own models (SAM and the background suggestions use the project's own). */
export const ownModels = (models: Model[]) => models.filter((m) => !m.shared);

/** Models the detector route can run. */
export const isDetector = (m: Model) => m.format === 'onnx' && (m.task === 'detect' || m.task === 'segment') && m.lifecycle !== 'archived';

/** Whether the project has the SAM encoder/decoder pair the click mode needs. */
export const hasSam = (models: Model[]) =>
  ['sam-encoder', 'sam-decoder'].every((task) => models.some((m) => m.task === task && m.format === 'onnx' && m.lifecycle !== 'archived'));
