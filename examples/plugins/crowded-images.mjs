// A complete third-party Versa plugin: a pipeline step that keeps the images with at least `min_detections`
// detections (optionally of one class) and reports how many it kept. Copy this file into PLUGINS_DIR and restart.
//
// A plugin module exports one declaration as its default export (or several as `export const plugins = [...]`):
//   type     one of importer, exporter, preprocessing, augmentation, quality_check, cleaning_action, detector,
//            training_adapter, pipeline_step
//   name     lower-case letters, digits, _ or -; a pipeline step's name is its step `type` in definitions
//   version  a semantic version
//   schema   JSON Schema of the parameters (a pipeline step's `params` are validated with it)
//   pipeline steps also declare `inputs` and `outputs` (data kinds: images, detections, violations, report, …)
//   and `execute(context)`, which gets { params, project_id, run_id, signal, progress(fraction), images,
//   detections, violations } (detections and violations keyed by image id) and returns
//   { images?: number[] (replaces the image list for later steps), outputs: {...} (shown on the run) }.
// Third-party steps get data, not Versa's services: they cannot write to the project or reach the network.

export default {
  type: 'pipeline_step',
  name: 'crowded_images',
  version: '1.0.0',
  title: 'Keep crowded images',
  description: 'Keeps the images with at least `min_detections` detections (of `class`, when given)',
  schema: {
    type: 'object',
    properties: {
      min_detections: { type: 'integer', minimum: 1, default: 2, description: 'Fewest detections an image needs to be kept' },
      class: { type: 'string', minLength: 1, description: 'Count only detections of this class' },
    },
    required: ['min_detections'],
    additionalProperties: false,
  },
  inputs: ['images', 'detections'],
  outputs: ['images'],
  async execute({ params, images, detections, signal, progress }) {
    const kept = [];
    for (const [i, imageId] of images.entries()) {
      if (signal.aborted) throw new Error('cancelled');
      const found = (detections[imageId] ?? []).filter((d) => !params.class || d.class_name === params.class);
      if (found.length >= params.min_detections) kept.push(imageId);
      progress((i + 1) / images.length);
    }
    return { images: kept, outputs: { kept: kept.length, dropped: images.length - kept.length } };
  },
};
