import type { ResponseOf } from './types.js';

/**
 * A registered model as GET /api/projects/{id}/models lists it; with `include_shared`, `shared` marks another
 * project's production model this project can use, and its class match.
 */
export type Model = ResponseOf<'/api/projects/{id}/models', 'get'>[number];

/** The project's own models (SAM and the background suggestions use the project's own). */
export const ownModels = (models: Model[]) => models.filter((m) => !m.shared);

/** Models the detector route can run. */
export const isDetector = (m: Model) => m.format === 'onnx' && (m.task === 'detect' || m.task === 'segment') && m.lifecycle !== 'archived';

/** Whether the project has the SAM encoder/decoder pair the click mode needs. */
export const hasSam = (models: Model[]) =>
  ['sam-encoder', 'sam-decoder'].every((task) => models.some((m) => m.task === task && m.format === 'onnx' && m.lifecycle !== 'archived'));
