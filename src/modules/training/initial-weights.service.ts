import { join } from 'node:path';
import type { Caller } from '../../access/caller.js';
import { ValidationError } from '../../http/errors.js';
import { regularFileSize } from '../../storage/local-files.js';
import type { AdapterSpec } from '../../training/adapters.js';
import type { ModelsService } from '../models/models.service.js';
import type { TrainingRepository } from './training.repository.js';

/** Where a run's weights start: a registered model's trainer checkpoint, or a file the operator put under MODELS_ROOT. */
export interface InitialWeights {
  /**
   * What the trainer loads (`init_weights` in run.json), kept in the experiment's extra, never shown: a file under
   * MODELS_ROOT, or a base model's checkpoint in the store, which the run copies into its folder on whichever worker.
   */
  file: { path: string } | { blobKey: string };
  /** The architecture it fixes (a base model's), or null. */
  arch: string | null;
  /** The base model's input size, the run's default; null for pretrained weights. */
  imgsz: number | null;
  /** What the experiment's recipe shows (`recipe.initial_weights`); the trainer's start event adds what it loaded. */
  recipe: Record<string, unknown>;
}

/** The pretrained files each adapter reads: torchvision state dicts or Versa checkpoints; Ultralytics' own `.pt`. */
const PRETRAINED_EXTENSIONS: Record<string, RegExp> = {
  'versa-detect': /\.(pt|pth)$/i,
  'versa-classify': /\.(pt|pth)$/i,
  ultralytics: /\.pt$/i,
};

/**
 * Resolves `base_model_id` or `pretrained_weights` of a training request (at most one) into the file the trainer
 * starts from: 404 for a model the caller cannot read, 422 for one it cannot start from (another task, not trained by
 * this adapter, no checkpoint, another architecture), and MODELS_ROOT's own checks (403 outside it, 422 missing) for a
 * path. Nothing is read but the model and experiment rows and the file's presence.
 */
export async function initialWeights(
  models: ModelsService,
  experiments: TrainingRepository,
  caller: Caller,
  adapter: AdapterSpec,
  request: { base_model_id?: number; pretrained_weights?: string; model?: string },
): Promise<InitialWeights | null> {
  if (request.base_model_id !== undefined && request.pretrained_weights !== undefined) {
    throw ValidationError.at(['body'], 'Give base_model_id or pretrained_weights, not both: a run starts from one set of weights');
  }
  if (request.pretrained_weights !== undefined) {
    const loc = ['body', 'pretrained_weights'];
    const accepted = PRETRAINED_EXTENSIONS[adapter.name];
    if (!accepted) throw ValidationError.at(loc, `Adapter '${adapter.name}' does not start from pretrained weights`);
    const file = await models.operatorFile(request.pretrained_weights, loc);
    if (!accepted.test(file)) {
      throw ValidationError.at(loc, adapter.name === 'ultralytics'
        ? 'The ultralytics adapter starts from an Ultralytics .pt file'
        : `${adapter.name} starts from a torchvision weights file (.pth or .pt, a state dict) or a Versa checkpoint (weights/best.pt)`);
    }
    return { file: { path: file }, arch: null, imgsz: null, recipe: { from: 'pretrained_weights', path: request.pretrained_weights } };
  }
  if (request.base_model_id === undefined) return null;
  const loc = ['body', 'base_model_id'];
  const id = request.base_model_id;
  const model = await models.readable(caller, id);
  if (!adapter.modelTask || !(adapter.name in PRETRAINED_EXTENSIONS)) {
    throw ValidationError.at(loc, `Adapter '${adapter.name}' does not fine-tune a registered model; base_model_id starts versa-detect and versa-classify runs`);
  }
  if (model.task !== adapter.modelTask) {
    throw ValidationError.at(loc, `Model ${id} is a ${model.task} model; ${adapter.name} trains ${adapter.modelTask} models and can start only from one`);
  }
  const experiment = model.experiment_id !== null ? await experiments.find(model.experiment_id) : undefined;
  if (!experiment || !experiment.run_dir) {
    throw ValidationError.at(loc, `Model ${id} was not trained by Versa (source ${model.source}): an ONNX file holds no trainer checkpoint to `
      + 'fine-tune from. Train it here, or put torchvision weights under MODELS_ROOT and give pretrained_weights');
  }
  if (experiment.adapter !== adapter.name) {
    throw ValidationError.at(loc, `Model ${id} was trained by ${experiment.adapter}; ${adapter.name} cannot load its checkpoint`);
  }
  const file = await checkpointOf(models, id, experiment);
  if (!file) {
    throw ValidationError.at(loc, `Model ${id} has no trainer checkpoint any more (weights/best.pt beside its ONNX file is gone): it cannot be fine-tuned`);
  }
  const params = JSON.parse(experiment.params) as { model?: string; imgsz?: number };
  const arch = params.model ?? adapter.defaultModel;
  if (request.model !== undefined && request.model !== arch) {
    throw ValidationError.at(['body', 'model'], `Model ${id} is a ${arch}; fine-tuning keeps its architecture: leave model out or give ${arch}`);
  }
  return {
    file,
    arch,
    imgsz: typeof params.imgsz === 'number' ? params.imgsz : null,
    recipe: { from: 'model', model_id: id, model_name: model.name, project_id: model.project_id, experiment_id: experiment.id, class_names: model.class_names },
  };
}

/**
 * A trained model's checkpoint: in the store since it was registered (any worker reads it), or, for a model trained
 * before checkpoints were published, the run folder's file on this machine.
 */
async function checkpointOf(models: ModelsService, modelId: number, experiment: { run_dir: string | null; extra: string }): Promise<InitialWeights['file'] | null> {
  const blobKey = await models.checkpointKey(modelId);
  if (blobKey) return { blobKey };
  const checkpoint = (JSON.parse(experiment.extra) as { artifacts?: Record<string, string> }).artifacts?.pt;
  const path = checkpoint && experiment.run_dir ? join(experiment.run_dir, checkpoint) : null;
  return path && (await regularFileSize(path)) !== null ? { path } : null;
}
