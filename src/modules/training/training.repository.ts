import { sql, type Insertable, type Updateable } from 'kysely';
import { projectVisibleTo } from '../../access/access.repository.js';
import type { Db, Tx } from '../../db/database.js';
import { lockTrainingQueue } from '../../db/write-locks.js';
import { RELEASED_MESSAGE } from '../../jobs/jobs.repository.js';
import type { ExperimentsTable } from '../../db/schema.js';
import type { ExperimentRow } from '../experiments/experiments.repository.js';

export type { ExperimentRow };

export interface VersionForTraining {
  id: number;
  project_id: number;
  number: number;
  status: string;
  name: string | null;
  split_config: string;
  preprocessing_config: string;
  augmentation_config: string;
}

/** Training runs' experiment records (all SQL of the training module), and the read-only queries it makes of a version's output. */
export class TrainingRepository {
  constructor(private readonly db: Db) {}

  insert(values: Insertable<ExperimentsTable>): Promise<ExperimentRow> {
    return this.db.insertInto('experiments').values(values).returningAll().executeTakeFirstOrThrow();
  }

  /**
   * Inserts a run unless its creator already has `cap` runs waiting to start (null then). Counted under the training
   * queue's lock, so that simultaneous requests cannot all pass; a run whose job is not made yet counts as waiting.
   */
  insertQueued(values: Insertable<ExperimentsTable> & { created_by: number }, cap: number): Promise<ExperimentRow | null> {
    return this.db.transaction().execute(async (tx) => {
      await lockTrainingQueue(tx);
      const { n } = await waiting(tx)
        .where('experiments.created_by', '=', values.created_by)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      if (Number(n) >= cap) return null;
      return tx.insertInto('experiments').values(values).returningAll().executeTakeFirstOrThrow();
    });
  }

  /**
   * Admits waiting runs, oldest first, while their project has fewer than `perProject` runs admitted and not ended
   * (a run ends when its experiment or its job does); returns the admitted runs' job ids, in order. Decided under the
   * training queue's lock, so that two processes never both fill a project's last slot.
   */
  admit(perProject: number): Promise<number[]> {
    return this.db.transaction().execute(async (tx) => {
      await lockTrainingQueue(tx);
      const candidates = await waiting(tx)
        .where('experiments.admitted_at', 'is', null)
        .where('jobs.status', '=', 'queued')
        .select(['experiments.id', 'experiments.project_id', 'jobs.id as job_id'])
        .orderBy('experiments.id')
        .execute();
      if (candidates.length === 0) return [];
      const busy = await tx
        .selectFrom('experiments')
        .innerJoin('jobs', 'jobs.id', 'experiments.job_id')
        .where('experiments.project_id', 'in', [...new Set(candidates.map((c) => c.project_id))])
        .where('experiments.admitted_at', 'is not', null)
        .where('experiments.status', 'in', ['queued', 'running'])
        .where('jobs.status', 'in', ['queued', 'running'])
        .select(['experiments.project_id', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('experiments.project_id')
        .execute();
      const taken = new Map(busy.map((b) => [b.project_id, Number(b.n)]));
      const admitted = candidates.filter((c) => {
        const n = taken.get(c.project_id) ?? 0;
        if (n >= perProject) return false;
        taken.set(c.project_id, n + 1);
        return true;
      });
      if (admitted.length === 0) return [];
      await tx.updateTable('experiments').set({ admitted_at: new Date().toISOString() }).where('id', 'in', admitted.map((a) => a.id)).execute();
      return admitted.map((a) => a.job_id!);
    });
  }

  /** The runs waiting to start, in the order they will be offered a worker: admitted ones first, then the others, oldest first. */
  async queueOrder(): Promise<number[]> {
    const rows = await waiting(this.db)
      .where('jobs.status', '=', 'queued')
      .select('experiments.id')
      .orderBy(sql`experiments.admitted_at is null`)
      .orderBy('experiments.admitted_at')
      .orderBy('experiments.id')
      .execute();
    return rows.map((r) => r.id);
  }

  find(id: number): Promise<ExperimentRow | undefined> {
    return this.db.selectFrom('experiments').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByJob(jobId: number): Promise<ExperimentRow | undefined> {
    return this.db.selectFrom('experiments').selectAll().where('job_id', '=', jobId).executeTakeFirst();
  }

  async update(id: number, values: Updateable<ExperimentsTable>): Promise<void> {
    await this.db.updateTable('experiments').set(values).where('id', '=', id).execute();
  }

  latest(projectId: number): Promise<ExperimentRow | undefined> {
    return this.db.selectFrom('experiments').selectAll().where('project_id', '=', projectId).orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  active(projectId: number): Promise<ExperimentRow | undefined> {
    return this.db
      .selectFrom('experiments')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('status', 'in', ['queued', 'running'])
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** Versa's finished runs with weights in projects `viewerId` may see (every project when null). */
  visibleRuns(viewerId: number | null): Promise<(ExperimentRow & { owner_id: number })[]> {
    let query = this.db
      .selectFrom('experiments')
      .innerJoin('projects', 'projects.id', 'experiments.project_id')
      .selectAll('experiments')
      .select('projects.owner_id')
      .where('experiments.status', '=', 'succeeded')
      .where('experiments.run_dir', 'is not', null);
    if (viewerId !== null) query = query.where(projectVisibleTo(viewerId));
    return query.orderBy('experiments.id', 'desc').limit(1000).execute();
  }

  /** Experiments a killed process left queued or running (not those whose job a shutdown released: they run again). */
  interrupted(): Promise<ExperimentRow[]> {
    return this.db
      .selectFrom('experiments')
      .selectAll()
      .where('status', 'in', ['queued', 'running'])
      .where((eb) => eb.not(eb.exists(eb.selectFrom('jobs').select('jobs.id').whereRef('jobs.id', '=', 'experiments.job_id').where('jobs.status', '=', 'queued').where('jobs.message', '=', RELEASED_MESSAGE))))
      .execute();
  }

  version(id: number): Promise<VersionForTraining | undefined> {
    return this.db
      .selectFrom('versions')
      .select(['id', 'project_id', 'number', 'status', 'name', 'split_config', 'preprocessing_config', 'augmentation_config'])
      .where('id', '=', id)
      .executeTakeFirst();
  }

  versionClasses(versionId: number): Promise<{ index: number; name: string }[]> {
    return this.db.selectFrom('version_classes').select(['index', 'name']).where('version_id', '=', versionId).orderBy('index').execute();
  }

  versionImages(versionId: number): Promise<{ id: number; split: string; filename: string; blob_key: string; width: number; height: number }[]> {
    return this.db
      .selectFrom('version_images')
      .select(['id', 'split', 'filename', 'blob_key', 'width', 'height'])
      .where('version_id', '=', versionId)
      .orderBy('id')
      .execute();
  }

  versionAnnotations(versionId: number): Promise<{ version_image_id: number; class_index: number; annotation_type: string; geometry: string }[]> {
    return this.db
      .selectFrom('version_annotations')
      .innerJoin('version_images', 'version_images.id', 'version_annotations.version_image_id')
      .select(['version_annotations.version_image_id', 'version_annotations.class_index', 'version_annotations.annotation_type', 'version_annotations.geometry'])
      .where('version_images.version_id', '=', versionId)
      .orderBy('version_annotations.id')
      .execute();
  }
}

/** Runs not started: the experiment queued and its job queued or not made yet (a request between its two inserts). */
function waiting(db: Db | Tx) {
  return db
    .selectFrom('experiments')
    .leftJoin('jobs', 'jobs.id', 'experiments.job_id')
    .where('experiments.status', '=', 'queued')
    .where((eb) => eb.or([eb('experiments.job_id', 'is', null), eb('jobs.status', '=', 'queued')]));
}
