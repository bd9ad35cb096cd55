import { basename, extname, join } from 'node:path';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../http/errors.js';
import { inputIssues } from '../../http/input-guard.js';
import { UnsupportedModelError } from '../../inference/errors.js';
import { parseUltralyticsMetadata } from '../../inference/onnx-metadata.js';
import { imageInputLayout, type ModelInfo } from '../../inference/tensor-data.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { runMetrics } from './run-metrics.adapter.js';
import { discoverRunWeights, fileUnderRoot, formatOf, hashFile, receiveToTemp, storedExtension, type ModelFile } from './model-files.adapter.js';
import type { ModelRuntime } from './model-runtime.adapter.js';
import { modelBlobKey } from '../../storage/keys.js';
import type { ModelsRepository, ModelWithOwner } from './models.repository.js';
import type { UploadForm } from './upload-parts.adapter.js';
import { readStream, removePath } from '../../storage/local-files.js';
import {
  MODEL_TASKS,
  toModelOut,
  type DeviceOut,
  type ModelFormat,
  type Lifecycle,
  type ModelOut,
  type ModelRegister,
  type ModelRow,
  type ModelSource,
  type ModelTask,
  type RunWeightsOut,
} from './models.schemas.js';

export interface ModelsServiceOptions {
  modelsRoot: string | null;
  runsRoot: string | null;
  /** Where uploads are spooled while they are checked. */
  uploadDir: string;
}

/** What a weights file declares about itself, merged with what the user said at registration. */
interface Described {
  format: ModelFormat;
  task: ModelTask;
  inputWidth: number | null;
  inputHeight: number | null;
  classNames: string[];
}

/** A trained model to register (see registerTrained). */
export interface TrainedModel {
  path: string;
  name: string;
  task: ModelTask;
  classNames: string[];
  experimentId: number;
  versionId: number | null;
  metrics: Record<string, unknown>;
  /** The trainer's checkpoint (weights/best.pt), published beside the model so any worker can fine-tune from it. */
  checkpointPath?: string;
}

/** Lists run weights produced elsewhere (Versa's training runs) for `GET /api/models/runs`. */
export type RunSource = (caller: Caller) => Promise<RunWeightsOut[]>;

/** The F1-maximising confidence per class name of a training run (the training module's), or null when it has none. */
export type ThresholdSource = (experimentId: number) => Promise<Record<string, number> | null>;

export class ModelsService {
  private readonly runSources: RunSource[] = [];
  private thresholdSource: ThresholdSource = async () => null;

  constructor(
    private readonly models: ModelsRepository,
    private readonly access: ProjectAccess,
    private readonly blobs: BlobStore,
    private readonly runtime: ModelRuntime,
    private readonly options: ModelsServiceOptions,
  ) {}

  async list(caller: Caller, projectId?: number): Promise<ModelOut[]> {
    if (projectId !== undefined) await this.access.project(caller, projectId, 'project.read');
    const rows = await this.models.list({ projectId, viewerId: this.access.listingViewer(caller) });
    return this.withHistory(rows);
  }

  async listForProject(caller: Caller, projectId: number): Promise<ModelOut[]> {
    return this.list(caller, projectId);
  }

  /** Registers a file under MODELS_ROOT (`path`) or a training run's weights under RUNS_ROOT (`run_weights`). */
  async registerPath(caller: Caller, projectId: number, input: ModelRegister): Promise<ModelOut> {
    await this.access.project(caller, projectId, 'models.write');
    if ((input.path === undefined) === (input.run_weights === undefined)) {
      throw ValidationError.at(['body'], 'Send exactly one of path and run_weights');
    }
    if (input.class_names) checkedClassNames(input.class_names);
    const fromRun = input.run_weights !== undefined;
    const real = fromRun
      ? await fileUnderRoot(this.options.runsRoot, input.run_weights!, 'RUNS_ROOT', ['body', 'run_weights'])
      : await fileUnderRoot(this.options.modelsRoot, input.path!, 'MODELS_ROOT', ['body', 'path']);
    const file = await hashFile(real);
    const described = await this.describe(file, basename(real), input);
    const source: ModelSource = fromRun ? 'training_run' : 'path';
    const name = input.name?.trim() ?? defaultName(real, fromRun);
    return this.insert(caller, projectId, { name, described, file, source, path: real, blobKey: null });
  }

  /**
   * Registers an uploaded file (part `file`, text parts name/task/class_names): spooled to disk while hashed, checked,
   * then stored under `projects/{id}/models/{sha256}-{random}.{ext}`. Nothing is left behind when any step fails.
   */
  async upload(caller: Caller, projectId: number, form: UploadForm): Promise<ModelOut> {
    await this.access.project(caller, projectId, 'models.write');
    let file: ModelFile | null = null;
    let blobKey: string | null = null;
    try {
      let filename = '';
      const fields = await form(async (part) => {
        if (part.name !== 'file' || file) return;
        filename = part.filename;
        file = await receiveToTemp(this.options.uploadDir, part.stream);
      });
      const received = file as ModelFile | null;
      if (!received) throw ValidationError.at(['body', 'file'], 'Expected a file part named "file"', 'missing');
      if (received.sizeBytes === 0) throw ValidationError.at(['body', 'file'], 'The file is empty');
      const given = uploadFields(fields);
      const described = await this.describe(received, filename, given);
      const name = given.name ?? (basename(filename, extname(filename)).trim() || `model-${received.sha256.slice(0, 8)}`);
      await this.assertNew(projectId, name, received.sha256);
      blobKey = modelBlobKey(projectId, received.sha256, storedExtension(described.format));
      await this.blobs.putStream(blobKey, readStream(received.path));
      const out = await this.insert(caller, projectId, { name, described, file: received, source: 'upload', path: null, blobKey });
      blobKey = null;
      return out;
    } finally {
      if (blobKey) await this.blobs.delete(blobKey);
      const spooled = file as ModelFile | null;
      if (spooled) await removePath(spooled.path);
    }
  }

  /**
   * Registers the ONNX file a Versa training run wrote (source `training_run`, lifecycle development) with the run's
   * experiment, version and metrics. The caller (the training job) has checked permissions when the run started.
   */
  async registerTrained(userId: number | null, projectId: number, input: TrainedModel): Promise<{ model: ModelOut; created: boolean }> {
    const file = await hashFile(input.path);
    // A deterministic run can export the very same file again: the experiment then names the model already registered.
    const same = await this.models.findBySha(projectId, file.sha256);
    if (same) return { model: (await this.withHistory([same]))[0], created: false };
    const described = await this.describe(file, basename(input.path), { task: input.task, class_names: input.classNames });
    let name = input.name;
    if (await this.models.findByName(projectId, name)) name = `${name}-exp${input.experimentId}`;
    const caller = { userId: userId ?? 0 } as Caller;
    // Published to the store: the run's folder is this worker's scratch space, and every API process serves the model.
    let blobKey: string | null = modelBlobKey(projectId, file.sha256, storedExtension(described.format));
    let checkpointKey: string | null = input.checkpointPath ? modelBlobKey(projectId, file.sha256, 'pt') : null;
    try {
      await this.blobs.putStream(blobKey, readStream(input.path));
      if (checkpointKey) await this.blobs.putStream(checkpointKey, readStream(input.checkpointPath!));
      const model = await this.insert(caller, projectId, {
        name,
        described,
        file,
        source: 'training_run',
        path: null,
        blobKey,
        checkpointKey,
        trained: { experimentId: input.experimentId, versionId: input.versionId, metrics: input.metrics },
      }, userId);
      blobKey = checkpointKey = null;
      return { model, created: true };
    } finally {
      for (const key of [blobKey, checkpointKey]) if (key) await this.blobs.delete(key);
    }
  }

  /** A model the caller may read (it may be another project's), e.g. to fine-tune from; 404 when it may not. */
  async readable(caller: Caller, modelId: number): Promise<ModelOut> {
    const model = await this.models.find(modelId);
    await this.access.check(caller, model && { id: model.project_id, owner_id: model.owner_id }, 'project.read', `Model ${modelId} not found`);
    return (await this.withHistory([model!]))[0];
  }

  /** A file the operator put under MODELS_ROOT (pretrained weights to train from), checked as `path` registrations are. */
  operatorFile(requested: string, loc: (string | number)[]): Promise<string> {
    return fileUnderRoot(this.options.modelsRoot, requested, 'MODELS_ROOT', loc);
  }

  /** The store key of a trained model's checkpoint, for fine-tuning from it; null when it has none (or it is gone). */
  async checkpointKey(modelId: number): Promise<string | null> {
    const key = (await this.models.find(modelId))?.checkpoint_key ?? null;
    return key && (await this.blobs.size(key)) !== null ? key : null;
  }

  /** Removes a registration made by a training run that then failed to record itself (nothing half-registered). */
  async unregisterTrained(modelId: number): Promise<void> {
    const model = await this.models.find(modelId);
    await this.models.delete(modelId);
    await this.deleteFiles(model);
  }

  private async deleteFiles(model: { blob_key: string | null; checkpoint_key: string | null } | undefined): Promise<void> {
    for (const key of [model?.blob_key, model?.checkpoint_key]) if (key) await this.blobs.delete(key);
  }

  /** Versa's own training runs as run weights (listed by the training module), besides RUNS_ROOT's folders. */
  addRunSource(source: RunSource): void {
    this.runSources.push(source);
  }

  /** Where promotion finds a trained model's per-class thresholds (the training module's experiments). */
  setThresholdSource(source: ThresholdSource): void {
    this.thresholdSource = source;
  }

  async delete(caller: Caller, modelId: number): Promise<void> {
    const model = await this.writable(caller, modelId);
    if (!(await this.models.delete(modelId))) throw NotFoundError.of('Model', modelId);
    await this.deleteFiles(model);
    await this.runtime.forget(model);
  }

  /**
   * Moves a model to another lifecycle stage and records who did it. Promoting to production archives the project's
   * current production model for the same task, in the same transaction (a unique index keeps it to one).
   */
  async setLifecycle(caller: Caller, modelId: number, lifecycle: Lifecycle): Promise<ModelOut> {
    const model = await this.writable(caller, modelId);
    if (model.lifecycle !== lifecycle) {
      const now = new Date().toISOString();
      // Promotion fixes the thresholds the model is served with; the run's own evaluation supplies them.
      const thresholds = lifecycle === 'production' && model.experiment_id !== null ? await this.thresholdSource(model.experiment_id) : null;
      try {
        await this.models.transaction(async (tx) => {
          if (thresholds) await this.models.setThresholds(model.id, JSON.stringify(thresholds), tx);
          if (lifecycle === 'production') {
            const current = await this.models.findProduction(model.project_id, model.task, tx);
            if (current && current.id !== model.id) {
              await this.models.setLifecycle(current.id, 'archived', tx);
              await this.models.recordEvent({
                model_id: current.id,
                from_lifecycle: 'production',
                to_lifecycle: 'archived',
                changed_by: caller.userId,
                changed_at: now,
                reason: `Replaced in production by model ${model.id} (${model.name})`,
              }, tx);
            }
          }
          await this.models.setLifecycle(model.id, lifecycle, tx);
          await this.models.recordEvent({
            model_id: model.id,
            from_lifecycle: model.lifecycle,
            to_lifecycle: lifecycle,
            changed_by: caller.userId,
            changed_at: now,
            reason: null,
          }, tx);
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new ConflictError('Another model was promoted to production at the same time; try again');
        throw err;
      }
    }
    return this.get(modelId);
  }

  /**
   * Run weights: Ultralytics-style folders under RUNS_ROOT (with their metrics from results.csv) and Versa's own
   * training runs the caller can see. 403 when RUNS_ROOT is not set (as before Versa trained).
   */
  async runs(caller: Caller): Promise<RunWeightsOut[]> {
    if (!this.options.runsRoot) throw new ForbiddenError('Training run discovery is disabled: RUNS_ROOT is not set');
    const found: RunWeightsOut[] = [];
    for (const w of await discoverRunWeights(this.options.runsRoot)) {
      found.push({
        path: w.path,
        task: w.task,
        run: w.run,
        file: w.file,
        format: w.format,
        size_bytes: w.sizeBytes,
        modified_at: w.modifiedAt,
        source: 'runs_root',
        metrics: await runMetrics(join(this.options.runsRoot, w.path, '..', '..', 'results.csv')),
      });
    }
    for (const source of this.runSources) found.push(...(await source(caller)));
    return found;
  }

  device(): DeviceOut {
    return this.runtime.device();
  }

  private async get(modelId: number): Promise<ModelOut> {
    const row = await this.models.find(modelId);
    if (!row) throw NotFoundError.of('Model', modelId);
    return (await this.withHistory([row]))[0];
  }

  private async writable(caller: Caller, modelId: number): Promise<ModelWithOwner> {
    const model = await this.models.find(modelId);
    await this.access.check(caller, model && { id: model.project_id, owner_id: model.owner_id }, 'models.write', `Model ${modelId} not found`);
    return model!;
  }

  private async withHistory(rows: ModelRow[]): Promise<ModelOut[]> {
    const events = await this.models.events(rows.map((r) => r.id));
    return rows.map((row) => toModelOut(row, events.get(row.id) ?? []));
  }

  /** 409 before any bytes are stored when the name or the very same weights are already registered here. */
  private async assertNew(projectId: number, name: string, sha256: string): Promise<void> {
    const sameName = await this.models.findByName(projectId, name);
    if (sameName) throw new ConflictError(`A model named '${name}' already exists in project ${projectId}`, { model_id: sameName.id });
    const sameFile = await this.models.findBySha(projectId, sha256);
    if (sameFile) {
      throw new ConflictError(`This file is already registered in project ${projectId} as '${sameFile.name}'`, { model_id: sameFile.id });
    }
  }

  private async insert(
    caller: Caller,
    projectId: number,
    model: {
      name: string;
      described: Described;
      file: ModelFile;
      source: ModelSource;
      path: string | null;
      blobKey: string | null;
      checkpointKey?: string | null;
      trained?: { experimentId: number; versionId: number | null; metrics: Record<string, unknown> };
    },
    createdBy: number | null = caller.userId,
  ): Promise<ModelOut> {
    await this.assertNew(projectId, model.name, model.file.sha256);
    const now = new Date().toISOString();
    try {
      const row = await this.models.transaction(async (tx) => {
        const inserted = await this.models.insert({
          project_id: projectId,
          name: model.name,
          format: model.described.format,
          task: model.described.task,
          input_width: model.described.inputWidth,
          input_height: model.described.inputHeight,
          class_names: JSON.stringify(model.described.classNames),
          size_bytes: model.file.sizeBytes,
          sha256: model.file.sha256,
          lifecycle: 'development',
          source: model.source,
          path: model.path,
          blob_key: model.blobKey,
          checkpoint_key: model.checkpointKey ?? null,
          created_by: createdBy,
          created_at: now,
          experiment_id: model.trained?.experimentId ?? null,
          trained_version_id: model.trained?.versionId ?? null,
          metrics: model.trained ? JSON.stringify(model.trained.metrics) : null,
        }, tx);
        await this.models.recordEvent({
          model_id: inserted.id,
          from_lifecycle: null,
          to_lifecycle: 'development',
          changed_by: createdBy,
          changed_at: now,
          reason: `Registered (${model.source})`,
        }, tx);
        return inserted;
      });
      return (await this.withHistory([row]))[0];
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`A model with this name or file was registered in project ${projectId} at the same time`);
      throw err;
    }
  }

  /**
   * Format from the file name; for ONNX files, task, input size and class names from the model itself (loaded once
   * with onnxruntime, which also proves it usable). Other formats are never opened: only hashed and stored.
   */
  private async describe(file: ModelFile, filename: string, given: { task?: ModelTask; class_names?: string[] }): Promise<Described> {
    const format = formatOf(filename);
    if (format !== 'onnx') {
      return { format, task: given.task ?? 'detect', inputWidth: null, inputHeight: null, classNames: given.class_names ?? [] };
    }
    let info: ModelInfo;
    try {
      info = await this.runtime.inspect(file.path, file.sha256);
    } catch (err) {
      if (err instanceof UnsupportedModelError) {
        throw new UnsupportedModelError(`${basename(filename)} is not a usable ONNX model: ${err.message.replace(/^Model \S+ could not be loaded: /, '')}`);
      }
      throw err;
    }
    const metadata = parseUltralyticsMetadata(info.metadata);
    const task = given.task ?? taskFrom(info, metadata.task);
    const input = info.inputs[0];
    // [1, C, H, W], or [H, W, 3] / [1, H, W, 3] for models that take interleaved pixels (SAM encoders with pre-processing).
    const shape = input ? imageInputLayout(input.dims) : null;
    const dims = shape ? [shape.height, shape.width] : input?.dims.length === 4 ? [input.dims[2], input.dims[3]] : [];
    const [height, width] = metadata.imgsz ?? dims.map((d) => (typeof d === 'number' && d > 0 ? d : null));
    const sized = task !== 'sam-decoder' && typeof width === 'number' && typeof height === 'number';
    return {
      format,
      task,
      inputWidth: sized ? width : null,
      inputHeight: sized ? height : null,
      classNames: given.class_names ?? metadata.names ?? [],
    };
  }
}

/** A model's task from its Ultralytics metadata, else from its interface (SAM's named inputs and outputs). */
function taskFrom(info: ModelInfo, declared: string | undefined): ModelTask {
  const inputs = new Set(info.inputs.map((i) => i.name));
  if (inputs.has('image_embeddings') && inputs.has('point_coords')) return 'sam-decoder';
  if (info.outputs.some((o) => o.name === 'image_embeddings')) return 'sam-encoder';
  if (declared === undefined) return 'detect';
  if ((MODEL_TASKS as readonly string[]).includes(declared)) return declared as ModelTask;
  throw ValidationError.at(['body', 'task'], `The model declares task '${declared}', which Versa cannot run; give a task explicitly to register it anyway`);
}

/** `runs/detect/train3/weights/best.onnx` → `train3-best`; a plain file → its name without the extension. */
function defaultName(path: string, fromRun: boolean): string {
  const stem = basename(path, extname(path));
  if (!fromRun) return stem;
  const run = basename(join(path, '..', '..'));
  return `${run}-${stem}`;
}

/** The text parts of an upload, validated like a JSON body would be (422 naming the part). */
function uploadFields(fields: Record<string, string>): { name?: string; task?: ModelTask; class_names?: string[] } {
  const out: { name?: string; task?: ModelTask; class_names?: string[] } = {};
  if (fields.name !== undefined) {
    const name = fields.name.trim();
    if (name.length === 0 || name.length > 200) throw ValidationError.at(['body', 'name'], 'must be 1 to 200 characters');
    out.name = name;
  }
  if (fields.task !== undefined && fields.task !== '') {
    if (!(MODEL_TASKS as readonly string[]).includes(fields.task)) {
      throw ValidationError.at(['body', 'task'], `must be one of ${MODEL_TASKS.join(', ')}`, 'enum');
    }
    out.task = fields.task as ModelTask;
  }
  if (fields.class_names !== undefined && fields.class_names.trim() !== '') {
    out.class_names = parseClassNames(fields.class_names);
  }
  return out;
}

/** A JSON array of names, or names separated by commas or new lines. */
function parseClassNames(text: string): string[] {
  let names: unknown;
  if (text.trim().startsWith('[')) {
    try {
      names = JSON.parse(text);
    } catch {
      throw ValidationError.at(['body', 'class_names'], 'is not a valid JSON array');
    }
  } else {
    names = text.split(/[,\n]/).map((n) => n.trim());
  }
  if (!Array.isArray(names) || names.some((n) => typeof n !== 'string' || n.trim() === '' || n.length > 100)) {
    throw ValidationError.at(['body', 'class_names'], 'must be a list of non-empty names of at most 100 characters');
  }
  return checkedClassNames((names as string[]).map((n) => n.trim()));
}

/** Class names follow the name rule of every input (no control characters), however they arrive. */
function checkedClassNames(names: string[]): string[] {
  const issues = inputIssues(names, ['body', 'class_names'], true);
  if (issues.length > 0) throw new ValidationError(issues);
  return names;
}
