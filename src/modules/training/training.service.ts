import { join, relative } from 'node:path';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, NotFoundError, TooManyRequestsError, ValidationError } from '../../http/errors.js';
import { JobCancelledError, JobReleasedError, type JobContext, type JobQueue, type JobRow } from '../../jobs/job-queue.js';
import type { JobsRepository } from '../../jobs/jobs.repository.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { ADAPTERS, adapterNamed, defaultAdapterFor, type AdapterSpec } from '../../training/adapters.js';
import { detectorBox, materialiseVersion, shapeOf, type MaterialImage, type MaterialisedFolder } from '../../training/materialise.js';
import { probePython, TRAINER_DIR, type PythonProbe } from '../../training/python.js';
import { recordServedPreprocessing } from '../../training/served-preprocessing.js';
import type { ReadinessEvaluator } from '../../training/readiness.js';
import type { TabularDataSource } from '../../training/tabular-data.js';
import { numericMetrics, superviseTraining, type HistoryRow, type RunRecorder, type TrainingResult } from '../../training/trainer-supervisor.js';
import type { Metrics } from '../../lib/metrics.js';
import { toJobOut } from '../jobs/jobs.schemas.js';
import type { ModelsService } from '../models/models.service.js';
import type { RunWeightsOut } from '../models/models.schemas.js';
import { initialWeights, type InitialWeights } from './initial-weights.service.js';
import { evaluationSummary } from '../experiments/experiments.service.js';
import { readEvaluationFile } from '../../training/evaluation-file.js';
import type { ExperimentRow, TrainingRepository } from './training.repository.js';
import type { AdapterOut, TabularTrainRequest, TrainJobOut, TrainRequest } from './training.schemas.js';
import { freshFolder, removePath, writeFileFrom, writeJsonFile } from '../../storage/local-files.js';

export const TRAIN_JOB = 'train';

export interface TrainPayload {
  experimentId: number;
}

export interface TrainingOptions {
  dataDir: string;
  python: string;
  /** Runs of one project admitted to the job queue at once (TRAINING_PER_PROJECT). */
  perProject: number;
  /** Runs one account may have waiting to start (TRAINING_QUEUED_PER_USER). */
  queuedPerUser: number;
  /** The trainers' whole environment (config.trainerEnv). */
  trainerEnv: Readonly<Record<string, string>>;
  /** Where the trainers' epochs are counted. */
  metrics: Metrics;
}

/** What a 429 for a full training allowance suggests waiting: runs take minutes, not seconds. */
const QUEUED_RETRY_AFTER_S = 60;

/**
 * Starts and supervises training runs: validates the request, applies the readiness gate, records an experiment,
 * queues the job; the job materialises the version (image adapters) or writes the project's tabular samples (the
 * tabular adapter) into the run's data folder, runs the adapter's Python trainer as a child process, follows its JSON
 * lines and, on success, registers the exported model. The data folder is removed when the job ends, whatever the end.
 */
/** One run as the job carries it: where it writes, what it was asked, and the epochs recorded so far (kept on failure). */
interface TrainingRun {
  experiment: ExperimentRow;
  adapter: AdapterSpec;
  runDir: string;
  dataDir: string;
  started: number;
  params: Record<string, unknown>;
  extra: Record<string, unknown>;
  history: HistoryRow[];
}

export class TrainingService {
  constructor(
    private readonly repository: TrainingRepository,
    private readonly jobs: JobsRepository,
    private readonly access: ProjectAccess,
    private readonly queue: JobQueue,
    private readonly blobs: BlobStore,
    private readonly models: ModelsService,
    private readonly readiness: ReadinessEvaluator,
    private readonly tabularData: TabularDataSource,
    private readonly options: TrainingOptions,
  ) {}

  get runsDir(): string {
    return join(this.options.dataDir, 'runs');
  }

  probe(): Promise<PythonProbe> {
    return probePython(this.options.python, this.options.trainerEnv);
  }

  async adapters(): Promise<AdapterOut[]> {
    const probe = await this.probe();
    return ADAPTERS.map((a) => {
      const reason = a.unavailable(probe);
      return {
        name: a.name,
        title: a.title,
        tasks: a.tasks,
        modality: a.modality,
        available: reason === null,
        reason,
        devices: a.modality === 'tabular' ? ['cpu'] : probe.cuda ? ['auto', 'cpu', 'cuda'] : ['auto', 'cpu'],
        models: a.models,
        default_model: a.defaultModel,
        params: a.params,
      };
    });
  }

  /**
   * `POST /api/projects/{id}/train` (and the pipelines' train step): 202 with the job, or 409 with the readiness
   * report when the gate blocks; nothing is created when any check fails.
   */
  async startTraining(caller: Caller, projectId: number, request: TrainRequest): Promise<TrainJobOut> {
    const project = await this.access.project(caller, projectId, 'models.write');
    const version = await this.repository.version(request.version_id);
    if (!version || version.project_id !== projectId) throw new NotFoundError(`Version ${request.version_id} not found in project ${projectId}`);
    const adapter = request.adapter ? adapterNamed(request.adapter) : defaultAdapterFor(project.project_type);
    if (!adapter) {
      throw request.adapter
        ? ValidationError.at(['body', 'adapter'], `Unknown adapter '${request.adapter}'; see GET /api/training/adapters`)
        : ValidationError.at(['body', 'adapter'], `No adapter trains ${project.project_type} projects`);
    }
    if (!adapter.tasks.includes(project.project_type)) {
      throw ValidationError.at(['body', 'adapter'], `Adapter '${adapter.name}' does not train ${project.project_type} projects (it trains ${adapter.tasks.join(', ')})`);
    }
    const init = await initialWeights(this.models, this.repository, caller, adapter, request);
    const model = request.model ?? init?.arch ?? adapter.defaultModel;
    if (!(adapter.models.includes(model) || adapter.modelPattern?.test(model))) {
      throw ValidationError.at(['body', 'model'], `Unknown model '${model}' for ${adapter.name}${adapter.models.length ? ` (one of ${adapter.models.join(', ')})` : ''}`);
    }
    const probe = await this.probe();
    const reason = adapter.unavailable(probe);
    if (reason) throw ValidationError.at(['body', 'adapter'], `Adapter '${adapter.name}' is not available: ${reason}`);
    if (request.device.startsWith('cuda') && !probe.cuda) throw ValidationError.at(['body', 'device'], `CUDA is not available to ${this.options.python}; use cpu or auto`);
    if (version.status !== 'ready') throw new ConflictError(`Version ${version.id} is ${version.status}, not ready; train once it has been generated`);
    await this.gate(caller, projectId, adapter.name, request);
    const params: Record<string, unknown> = {
      model,
      epochs: request.epochs ?? adapter.params.epochs?.default,
      imgsz: request.imgsz ?? init?.imgsz ?? adapter.params.imgsz?.default,
      batch: request.batch ?? adapter.params.batch?.default,
      device: request.device,
      seed: request.seed ?? adapter.params.seed?.default,
      time_budget_s: request.time_budget_s ?? adapter.params.time_budget_s?.default,
      require_ready: request.require_ready,
      min_readiness_score: request.min_readiness_score,
      ...(request.base_model_id !== undefined ? { base_model_id: request.base_model_id } : {}),
      ...(request.pretrained_weights !== undefined ? { pretrained_weights: request.pretrained_weights } : {}),
    };
    const recipe = {
      version_number: version.number, split_config: JSON.parse(version.split_config), preprocessing_config: JSON.parse(version.preprocessing_config), augmentation_config: JSON.parse(version.augmentation_config),
      ...(init ? { initial_weights: init.recipe } : {}),
    };
    const { experiment, job } = await this.create(caller, projectId, adapter, params, version.id, request.name ?? `${adapter.name} v${version.number}`, { recipe, ...(init ? { init_weights: init.file } : {}) });
    return this.trainJobOut(job, experiment);
  }

  /**
   * The file a run starts from, on this worker: an operator's file under MODELS_ROOT as it is, a base model's
   * checkpoint copied from the store into the run folder (a path: an experiment queued before checkpoints were stored).
   */
  private async initialWeightsFile(init: InitialWeights['file'] | string | undefined, runDir: string): Promise<string | undefined> {
    if (!init || typeof init === 'string') return init;
    if ('path' in init) return init.path;
    const path = join(runDir, 'init-weights.pt');
    await writeFileFrom(path, this.blobs.stream(init.blobKey));
    return path;
  }

  /**
   * `POST /api/projects/{id}/adapters/train`: the tabular adapter on the project's current tabular samples, with the
   * same permission, readiness gate, experiment and job as startTraining. The data problems come first (the gate, then
   * a train and a valid split to learn and measure on: 409), the adapter's runtime last (422), so the answer about the
   * data is the same on every machine. Nothing is written before the job runs: its data folder is written by the job.
   */
  async trainTabular(caller: Caller, projectId: number, request: TabularTrainRequest): Promise<TrainJobOut> {
    await this.access.project(caller, projectId, 'models.write');
    const adapter = adapterNamed(request.adapter);
    if (!adapter || adapter.modality !== 'tabular') throw ValidationError.at(['body', 'adapter'], `Adapter '${request.adapter}' does not train tabular samples`);
    await this.gate(caller, projectId, adapter.name, request);
    const layout = await this.tabularData.tabularLayout(projectId);
    if (!layout) throw new ConflictError(`Project ${projectId} has no tabular samples: import a CSV with its target (POST /api/projects/${projectId}/import/tabular)`);
    if (layout.counts.train === 0 || layout.counts.valid === 0) {
      throw new ConflictError(
        `The ${layout.counts.train === 0 ? 'train' : 'valid'} split has no tabular samples: the run needs both, to learn and to measure the model `
          + `(assign splits with POST /api/projects/${projectId}/samples/splits)`,
      );
    }
    const reason = adapter.unavailable(await this.probe());
    if (reason) throw ValidationError.at(['body', 'adapter'], `Adapter '${adapter.name}' is not available: ${reason}`);
    const params: Record<string, unknown> = {
      model: adapter.defaultModel,
      epochs: request.epochs ?? adapter.params.epochs?.default,
      lr: request.lr ?? adapter.params.lr?.default,
      max_depth: request.max_depth ?? adapter.params.max_depth?.default,
      seed: request.seed ?? adapter.params.seed?.default,
      require_ready: request.require_ready,
      min_readiness_score: request.min_readiness_score,
    };
    const recipe = { data: 'tabular samples', target: layout.target, task: layout.task, classes: layout.classes, splits: layout.counts };
    const { experiment, job } = await this.create(caller, projectId, adapter, params, null, request.name ?? `tabular ${layout.target}`, { recipe });
    return this.trainJobOut(job, experiment);
  }

  async status(caller: Caller, projectId: number): Promise<{ status: 'active' | 'latest' | 'idle'; job: TrainJobOut | null }> {
    await this.access.project(caller, projectId, 'project.read');
    const active = await this.repository.active(projectId);
    const shown = active ?? (await this.repository.latest(projectId));
    if (!shown) return { status: 'idle', job: null };
    return { status: active ? 'active' : 'latest', job: await this.jobOf(shown) };
  }

  async trainJob(caller: Caller, jobId: number): Promise<TrainJobOut> {
    const experiment = await this.repository.findByJob(jobId);
    const notFound = `Training job ${jobId} not found`;
    if (!experiment) throw new NotFoundError(notFound);
    await this.access.project(caller, experiment.project_id, 'project.read').catch(() => {
      throw new NotFoundError(notFound);
    });
    return this.jobOf(experiment);
  }

  /** Versa's finished runs the caller can see, for `GET /api/models/runs`. */
  async runWeights(caller: Caller): Promise<RunWeightsOut[]> {
    const rows = await this.repository.visibleRuns(this.access.listingViewer(caller));
    return rows.flatMap((row) => {
      const extra = JSON.parse(row.extra) as { artifacts?: Record<string, string> };
      const file = extra.artifacts?.onnx ?? extra.artifacts?.model;
      if (!file || !row.run_dir) return [];
      return [{
        path: join(relative(this.options.dataDir, row.run_dir), file),
        task: row.adapter,
        run: `exp-${row.id}`,
        file: file.split('/').pop()!,
        format: file.endsWith('.onnx') ? ('onnx' as const) : ('other' as const),
        size_bytes: 0,
        modified_at: row.finished_at ?? row.created_at,
        source: 'versa' as const,
        metrics: numericMetrics(JSON.parse(row.metrics)),
        experiment_id: row.id,
        project_id: row.project_id,
        model_id: row.model_id,
      }];
    });
  }

  /** Writes a version in the trainer's layout (links, not copies); used by the job and by benchmarks. */
  async materialise(versionId: number, dir: string): Promise<MaterialisedFolder> {
    const classes = await this.repository.versionClasses(versionId);
    const images = await this.repository.versionImages(versionId);
    const annotations = await this.repository.versionAnnotations(versionId);
    const classify = annotations.length > 0 && annotations.every((a) => a.annotation_type === 'classification');
    const byImage = new Map<number, typeof annotations>();
    for (const a of annotations) byImage.set(a.version_image_id, [...(byImage.get(a.version_image_id) ?? []), a]);
    const material: MaterialImage[] = images.map((image) => {
      const own = byImage.get(image.id) ?? [];
      const boxes = own.map((a) => detectorBox(a.class_index, a.annotation_type, JSON.parse(a.geometry))).filter((box) => box !== null);
      const label = own.find((a) => a.annotation_type === 'classification')?.class_index ?? null;
      const shapes = own.flatMap((a) => shapeOf(a.class_index, a.annotation_type, JSON.parse(a.geometry)) ?? []);
      return { split: image.split, filename: image.filename, blobKey: image.blob_key, width: image.width, height: image.height, boxes, label, shapes };
    });
    return materialiseVersion(this.blobs, { task: classify ? 'classify' : 'detect', names: classes.map((c) => c.name), images: material }, dir);
  }

  /** The job: runs the trainer and records everything; on cancel or failure removes the run's partial output. */
  async runJob(ctx: JobContext<TrainPayload>): Promise<object> {
    const experiment = await this.repository.find(ctx.payload.experimentId);
    if (!experiment) throw new Error(`Experiment ${ctx.payload.experimentId} was deleted before it ran`);
    const adapter = adapterNamed(experiment.adapter)!;
    // The run's folder is on the machine that trains (the request named one on its own machine): its scratch space.
    const run: TrainingRun = {
      experiment,
      adapter,
      runDir: join(this.runsDir, adapter.name, `exp-${experiment.id}`),
      dataDir: this.dataDirOf(experiment.id),
      started: Date.now(),
      params: JSON.parse(experiment.params) as Record<string, unknown>,
      extra: JSON.parse(experiment.extra) as Record<string, unknown>,
      history: [],
    };
    await this.repository.update(experiment.id, { status: 'running', run_dir: run.runDir });
    try {
      await freshFolder(run.runDir);
      await this.writeRunData(ctx, run);
      const configPath = join(run.runDir, 'run.json');
      const init = await this.initialWeightsFile(run.extra.init_weights as InitialWeights['file'] | string | undefined, run.runDir);
      await writeJsonFile(configPath, { ...run.params, ...(init ? { init_weights: init } : {}), data_dir: run.dataDir, out_dir: run.runDir });
      const final = await superviseTraining(
        { python: this.options.python, script: join(TRAINER_DIR, adapter.script), configPath, cwd: run.runDir, env: this.options.trainerEnv, signal: ctx.signal },
        this.recorderFor(ctx, run),
        { metrics: this.options.metrics, adapter: adapter.name },
      );
      run.history = final.history;
      return await this.recordSucceeded(run, final);
    } catch (err) {
      await this.recordEnded(ctx, run, err);
      throw err;
    } finally {
      await removePath(run.dataDir);
      // The experiment has ended, so its project's slot is free: the next run of the project may be admitted (when
      // that fails, the periodic admission tries again; this run's outcome stands).
      await this.admitWaiting().catch(() => undefined);
    }
  }

  /** The run's data folder: the version's images (materialised) or the project's tabular samples. */
  private async writeRunData(ctx: JobContext<TrainPayload>, run: TrainingRun): Promise<void> {
    if (run.adapter.modality === 'tabular') {
      await ctx.report({ progress: 0, message: 'writing the tabular samples' });
      await freshFolder(run.dataDir);
      const layout = await this.tabularData.writeTabularFolder(run.experiment.project_id, run.dataDir);
      run.extra.materialised = { counts: layout.counts, target: layout.target, task: layout.task };
      if (layout.counts.train === 0 || layout.counts.valid === 0) throw new Error(`No tabular sample is in the ${layout.counts.train === 0 ? 'train' : 'valid'} split any more`);
      return;
    }
    await ctx.report({ progress: 0, message: 'materialising the version' });
    const folder = await this.materialise(run.experiment.version_id!, run.dataDir);
    run.extra.materialised = { counts: folder.counts, linked: folder.linked, copied: folder.copied };
    if ((folder.counts.train ?? 0) === 0) throw new Error('The version has no training images with labels');
  }

  /** What the supervisor tells as the run goes: the environment, loaded weights and each epoch, recorded at once. */
  private recorderFor(ctx: JobContext<TrainPayload>, run: TrainingRun): RunRecorder {
    return {
      started: async (event) => {
        run.extra.environment = event.env;
        if (!event.init) return;
        // What the trainer loaded (classes matched, new and dropped; tensors of a pretrained file), shown from now on.
        const { source: _source, ...loaded } = event.init;
        const recipe = run.extra.recipe as Record<string, Record<string, unknown>>;
        recipe.initial_weights = { ...recipe.initial_weights, ...loaded };
        await this.repository.update(run.experiment.id, { extra: JSON.stringify(run.extra) });
      },
      epochs: async (epoch, latest, rows) => {
        // The supervisor's own history, which grows with every epoch: what a failed run keeps.
        run.history = rows;
        await this.repository.update(run.experiment.id, { epoch, metrics: JSON.stringify(latest), history: JSON.stringify(rows) });
      },
      report: (report) => ctx.report(report),
    };
  }

  /** A finished run: its model registered (with how its inputs were made), then the experiment marked succeeded. */
  private async recordSucceeded(run: TrainingRun, final: TrainingResult): Promise<object> {
    const { experiment, runDir, extra } = run;
    extra.artifacts = final.artifacts;
    extra.confusion = final.confusion;
    extra.environment = final.environment;
    extra.evaluation = final.evaluation;
    const evaluationFile = final.artifacts.evaluation ? await readEvaluationFile(join(runDir, final.artifacts.evaluation)) : null;
    extra.analysis = evaluationFile ? evaluationSummary(evaluationFile) : null;
    const registered = await this.registerModel(run, final);
    try {
      await this.repository.update(experiment.id, {
        status: 'succeeded',
        metrics: JSON.stringify(final.metrics),
        history: JSON.stringify(final.history),
        per_class: JSON.stringify(final.per_class.map(perClassOut)),
        extra: JSON.stringify(extra),
        params: JSON.stringify({ ...run.params, ...final.params }),
        best_epoch: final.best_epoch,
        epoch: final.epoch,
        model_id: registered?.id ?? null,
        finished_at: new Date().toISOString(),
        duration_s: (Date.now() - run.started) / 1000,
      });
    } catch (err) {
      if (registered?.created) await this.models.unregisterTrained(registered.id);
      throw err;
    }
    return { experiment_id: experiment.id, model_id: registered?.id ?? null, metrics: final.metrics };
  }

  /** The run's model, when its adapter makes one: registered with the version's classes and preprocessing. */
  private async registerModel(run: TrainingRun, final: TrainingResult): Promise<{ id: number; created: boolean } | null> {
    const { experiment, adapter, runDir } = run;
    const weights = final.artifacts[adapter.modelArtifact ?? 'onnx'];
    if (!adapter.modelTask || !weights) return null;
    const version = experiment.version_id !== null ? await this.repository.version(experiment.version_id) : undefined;
    if (version) await recordServedPreprocessing(join(runDir, weights), JSON.parse(version.preprocessing_config));
    const names = final.class_names ?? (experiment.version_id !== null ? (await this.repository.versionClasses(experiment.version_id)).map((c) => c.name) : []);
    const { model, created } = await this.models.registerTrained(experiment.created_by, experiment.project_id, {
      path: join(runDir, weights),
      checkpointPath: final.artifacts.pt ? join(runDir, final.artifacts.pt) : undefined,
      name: experiment.name,
      task: adapter.modelTask,
      classNames: names,
      experimentId: experiment.id,
      versionId: experiment.version_id,
      metrics: final.metrics,
    });
    return { id: model.id, created };
  }

  /** A run that did not finish: its output removed; requeued after a shutdown, else cancelled or failed. */
  private async recordEnded(ctx: JobContext<TrainPayload>, run: TrainingRun, err: unknown): Promise<void> {
    await removePath(run.runDir);
    if (ctx.signal.reason instanceof JobReleasedError) {
      // A shutdown handed the job back: the run starts again from nothing in the next process that takes it.
      await this.repository.update(run.experiment.id, { status: 'queued', history: '[]', epoch: 0 }).catch(() => undefined);
      return;
    }
    const cancelled = ctx.signal.aborted || err instanceof JobCancelledError;
    await this.repository.update(run.experiment.id, {
      status: cancelled ? 'cancelled' : 'failed',
      error: cancelled ? null : err instanceof Error ? err.message.slice(0, 2000) : String(err),
      history: JSON.stringify(run.history),
      run_dir: null,
      finished_at: new Date().toISOString(),
      duration_s: (Date.now() - run.started) / 1000,
    }).catch(() => undefined);
  }

  /**
   * Hands waiting runs to the job queue, oldest first, as long as their project has fewer than `perProject` runs
   * admitted and not ended; a run waiting for its own project's slot never holds back another project's. Called when
   * a run is requested and when one ends, and now and then (a cancelled job frees its slot without a run ending). A
   * run the queue refuses is failed, the others are still handed over, and the first refusal is thrown.
   */
  async admitWaiting(): Promise<void> {
    let refused: unknown = null;
    for (const jobId of await this.repository.admit(this.options.perProject)) {
      const job = await this.jobs.find(jobId);
      if (!job) continue;
      try {
        await this.queue.submit(job);
      } catch (err) {
        refused ??= err;
        await this.jobs.finish(jobId, { error: 'could not be queued' });
        const experiment = await this.repository.findByJob(jobId);
        if (experiment) await this.repository.update(experiment.id, { status: 'failed', error: 'could not be queued', finished_at: new Date().toISOString() });
      }
    }
    if (refused) throw refused;
  }

  /** Experiments a killed process left queued or running are failed at start, their partial output removed. */
  async failInterrupted(): Promise<void> {
    for (const row of await this.repository.interrupted()) {
      if (row.run_dir) await removePath(row.run_dir);
      await removePath(this.dataDirOf(row.id));
      await this.repository.update(row.id, { status: 'failed', error: 'interrupted by a restart', run_dir: null, finished_at: new Date().toISOString() });
    }
  }

  /**
   * The readiness gate of every training request: with `require_ready`, a project below `min_readiness_score` or with
   * a blocker is refused (409 with the readiness report) before anything is recorded.
   */
  private async gate(caller: Caller, projectId: number, adapter: string, request: { require_ready: boolean; min_readiness_score: number }): Promise<void> {
    if (!request.require_ready) return;
    const report = await this.readiness.evaluate(caller, projectId, { adapter, config: { min_readiness_score: request.min_readiness_score } });
    if (!report.ready) {
      throw new ConflictError(`Project ${projectId} is not ready to train (readiness ${report.score}, gate ${report.threshold}). ${report.summary}`, { readiness: report });
    }
  }

  /** The run's data folder (the materialised version, or the written tabular samples), removed when the job ends. */
  private dataDirOf(experimentId: number): string {
    return join(this.options.dataDir, 'training', 'data', `exp-${experimentId}`);
  }

  private async create(
    caller: Caller,
    projectId: number,
    adapter: AdapterSpec,
    params: Record<string, unknown>,
    versionId: number | null,
    name: string,
    extra: Record<string, unknown>,
  ): Promise<{ experiment: ExperimentRow; job: JobRow }> {
    const now = new Date().toISOString();
    const experiment = await this.repository.insertQueued({
      project_id: projectId,
      version_id: versionId,
      job_id: null,
      model_id: null,
      name,
      tags: '[]',
      notes: '',
      status: 'queued',
      adapter: adapter.name,
      params: JSON.stringify(params),
      metrics: '{}',
      history: '[]',
      per_class: '[]',
      extra: JSON.stringify(extra),
      best_epoch: null,
      epoch: 0,
      error: null,
      run_dir: null,
      created_by: caller.userId,
      created_at: now,
      finished_at: null,
      duration_s: null,
    }, this.options.queuedPerUser);
    if (!experiment) {
      throw new TooManyRequestsError(
        `You have ${this.options.queuedPerUser} training runs waiting to start, the most one account may have: wait until one starts, `
          + 'or cancel one (POST /api/jobs/{id}/cancel)',
        QUEUED_RETRY_AFTER_S,
      );
    }
    const runDir = join(this.runsDir, adapter.name, `exp-${experiment.id}`);
    const payload: TrainPayload = { experimentId: experiment.id };
    await this.repository.update(experiment.id, { run_dir: runDir, name: request_name(name, experiment.id) });
    let job: JobRow;
    try {
      // The job record is made now and handed to the queue when the run is admitted (at once if its project has room).
      job = await this.jobs.create(TRAIN_JOB, payload, projectId, caller.userId);
      await this.repository.update(experiment.id, { job_id: job.id });
    } catch (err) {
      await this.repository.update(experiment.id, { status: 'failed', error: 'could not be queued', finished_at: new Date().toISOString() });
      throw err;
    }
    // A run the queue refuses here is recorded failed, which the answer shows.
    await this.admitWaiting().catch(() => undefined);
    return { experiment: (await this.repository.find(experiment.id))!, job: (await this.jobs.find(job.id))! };
  }

  private async jobOf(experiment: ExperimentRow): Promise<TrainJobOut> {
    const job = experiment.job_id !== null ? await this.jobs.find(experiment.job_id) : undefined;
    if (!job) throw new NotFoundError(`The job of experiment ${experiment.id} is gone`);
    return this.trainJobOut(job, experiment);
  }

  private async trainJobOut(job: JobRow, experiment: ExperimentRow): Promise<TrainJobOut> {
    const params = JSON.parse(experiment.params) as { epochs?: number };
    const place = job.status === 'queued' ? (await this.repository.queueOrder()).indexOf(experiment.id) : -1;
    return {
      ...toJobOut(job),
      version_id: experiment.version_id,
      experiment_id: experiment.id,
      adapter: experiment.adapter,
      epoch: experiment.epoch,
      epochs: typeof params.epochs === 'number' ? params.epochs : null,
      metrics: JSON.parse(experiment.metrics) as Record<string, number | null>,
      model_id: experiment.model_id,
      queue_position: place >= 0 ? place + 1 : null,
    };
  }
}

/** `name #id` keeps experiment (and model) names distinct without asking the user for one. */
function request_name(name: string, id: number): string {
  return `${name} #${id}`;
}

function perClassOut(entry: unknown): Record<string, unknown> {
  const { class_index, ...rest } = entry as Record<string, unknown>;
  return { class_id: class_index, ...rest };
}

