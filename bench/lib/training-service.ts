import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pythonPath, TRAINER_DIR } from '../../src/training/python.js';
import { TrainingService } from '../../src/modules/training/training.service.js';
import { JobsRepository } from '../../src/jobs/jobs.repository.js';
import { DatasetProfiler } from '../../src/modules/profile/dataset-profile.service.js';
import { ProfileRepository } from '../../src/modules/profile/profile.repository.js';
import { ProjectRevisionsRepository } from '../../src/modules/profile/project-revisions.repository.js';
import { SampleDataRepository } from '../../src/modules/profile/sample-data.repository.js';
import { ReadinessEvaluator } from '../../src/modules/readiness/readiness.service.js';
import { TrainingRepository } from '../../src/modules/training/training.repository.js';
import type { Client, TestApp } from '../../test/helpers/test-app.js';
import type { Api } from './training.js';

const run = promisify(execFile);

/**
 * The training service over an in-process app's dependencies, for the benches that need its `materialise` (the
 * trainer's folder of a version, exactly as a job writes it); the model registry and the trainer probe are not wired.
 */
export function trainingService(t: TestApp): TrainingService {
  const deps = t.versa.deps;
  const readiness = new ReadinessEvaluator(deps.access, new DatasetProfiler(new ProfileRepository(deps.db), new ProjectRevisionsRepository(deps.db)), new SampleDataRepository(deps.db));
  return new TrainingService(new TrainingRepository(deps.db), new JobsRepository(deps.db), deps.access, deps.queue, deps.blobs, null as never, readiness, null as never, {
    dataDir: deps.config.dataDir,
    python: deps.config.python,
    perProject: deps.config.trainingPerProject,
    queuedPerUser: deps.config.trainingQueuedPerUser,
    trainerEnv: deps.config.trainerEnv,
    metrics: deps.metrics,
  });
}

/**
 * A registered detector through auto-annotate on a version's valid images, scored by the trainer's metric code
 * (trainer/versa_trainer/evaluate.py) against the version's frozen labels: the served model's valid mAP50 and
 * mAP50-95, and predict-nothing's. The images' live labels are taken off first (auto-annotate skips detections an
 * accepted shape of the same class already covers).
 */
export async function scoreServedDetector(t: TestApp, owner: Client, projectId: number, versionId: number, modelId: number): Promise<{ served: Scores; nothing: Scores }> {
  const db = t.versa.deps.db;
  const valid = await db.selectFrom('version_images').select(['id', 'source_image_id']).where('version_id', '=', versionId).where('split', '=', 'valid').execute();
  const truth = await db.selectFrom('version_annotations').select(['version_image_id', 'class_index', 'geometry']).where('version_image_id', 'in', valid.map((v) => v.id)).execute();
  const names = (await new TrainingRepository(db).versionClasses(versionId)).map((c) => c.name);
  const imageIds = valid.map((v) => v.source_image_id!);
  await db.deleteFrom('annotations').where('image_id', 'in', imageIds).execute();
  const annotated = await owner.post(`/api/projects/${projectId}/auto-annotate/yolo`, { model: modelId, confidence: 0.001, iou: 0.6, image_ids: imageIds, create_missing_classes: false });
  if (annotated.status !== 200 && annotated.status !== 202) throw new Error(`auto-annotate: ${annotated.status} ${JSON.stringify(annotated.body)}`);
  await t.versa.deps.queue.drain();
  const predicted = await db.selectFrom('annotations').select(['image_id', 'class_id', 'geometry', 'confidence']).where('image_id', 'in', imageIds).where('source', '=', `model:${modelId}`).execute();
  const classes = await db.selectFrom('classes').select(['id', 'name']).where('project_id', '=', projectId).execute();
  const classIndex = new Map(classes.map((c) => [c.id, names.indexOf(c.name)]));
  const spec = {
    task: 'detect',
    class_names: names,
    images: valid.map((v) => ({
      id: v.id,
      gt: truth.filter((a) => a.version_image_id === v.id).map((a) => {
        const g = JSON.parse(a.geometry);
        return [a.class_index, g.x, g.y, g.width, g.height];
      }),
      pred: predicted.filter((p) => p.image_id === v.source_image_id).map((p) => {
        const g = typeof p.geometry === 'string' ? JSON.parse(p.geometry) : p.geometry;
        return [classIndex.get(p.class_id), g.x, g.y, g.width, g.height, p.confidence];
      }),
    })),
  };
  const evaluate = async (value: object): Promise<Scores> => {
    const path = join(t.dataDir, `eval-${randomUUID()}.json`);
    await writeFile(path, JSON.stringify(value));
    return JSON.parse((await run(pythonPath(), ['-m', 'versa_trainer.evaluate', '--input', path], { cwd: TRAINER_DIR })).stdout);
  };
  return { served: await evaluate(spec), nothing: await evaluate({ ...spec, images: spec.images.map((i) => ({ ...i, pred: [] })) }) };
}

export interface Scores {
  map50: number;
  map50_95: number;
}

/** The benches' `Api` over an in-process app's client: a JSON call that throws on a status ≥ 300. */
export function inProcessApi(client: Client): Api {
  return async (method, path, body) => {
    const res = await client.request({ method: method as never, url: path, ...(body === undefined ? {} : { payload: body as object }) });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as never;
  };
}
