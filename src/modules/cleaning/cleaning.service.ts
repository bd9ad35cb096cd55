import { createHash } from 'node:crypto';
import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import type { Executor } from '../../db/database.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.js';
import { ConflictError, NotFoundError } from '../../http/errors.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { LockGuard } from '../locks/lock-guard.service.js';
import type { NewRevision, RevisionsRepository } from '../revisions/revisions.repository.js';
import { stateText } from '../revisions/revisions.schemas.js';
import { assertKnownIds, resolveParams, type ParamValues } from '../quality/check-catalog.logic.js';
import { cleaningActionsOf, Plan, type PlannedChange } from './cleaning-actions.logic.js';
import type { AnnotationFullRow, CleaningRecordRow, CleaningRepository, CleaningRunRow, ImageFullRow } from './cleaning.repository.js';
import type { CleaningActionIn, CleaningApplyBody, CleaningPreviewBody, CleaningPreviewOut, CleaningRunOut } from './cleaning.schemas.js';
import type { QualityService } from '../quality/quality.service.js';

/**
 * How long a cleaning run can be reverted. The files of the images it deleted are kept that long (a revert puts the
 * rows back and they must find their bytes), then removed when the project is next cleaned or its history read.
 */
export const REVERT_WINDOW_DAYS = 7;
const HISTORY_LIMIT = 100;

interface Planned {
  actions: { id: string; params: ParamValues }[];
  changes: PlannedChange[];
  /** Digest of the rows the changes touch, as they were read. */
  state: string;
  token: string;
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

export function toCleaningRunOut(row: CleaningRunRow): CleaningRunOut {
  return {
    id: row.id,
    project_id: row.project_id,
    user_id: row.user_id,
    actions: JSON.parse(row.actions),
    summary: JSON.parse(row.summary),
    status: row.status,
    created_at: row.created_at,
    revertible_until: row.revertible_until,
    reverted_at: row.reverted_at,
  };
}

function summaryOf(changes: PlannedChange[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of changes) out[c.kind] = (out[c.kind] ?? 0) + 1;
  return out;
}

const publicChange = ({ set: _set, ...change }: PlannedChange) => change;

/**
 * Cleaning: a preview plans the changes and hands back a token that hashes the actions, the changes and the state of
 * every row they touch; apply plans again, refuses a token that no longer matches (409), and makes exactly those
 * changes in one transaction, after checking (inside it) that no touched row changed meanwhile and no other user
 * holds a lock on a touched image. Every annotation it changes gets a revision; the run records each row's state
 * before and after, so a revert can put everything back in one transaction.
 */
export class CleaningService {
  constructor(
    private readonly access: ProjectAccess,
    private readonly repository: CleaningRepository,
    private readonly quality: QualityService,
    private readonly revisions: RevisionsRepository,
    private readonly locks: LockGuard,
    private readonly blobs: BlobStore,
  ) {}

  async preview(caller: Caller, projectId: number, body: CleaningPreviewBody): Promise<CleaningPreviewOut> {
    await this.access.project(caller, projectId, 'images.delete');
    const planned = await this.plan(projectId, body.actions);
    return { preview_token: planned.token, summary: summaryOf(planned.changes), changes: planned.changes.map(publicChange) };
  }

  async apply(caller: Caller, projectId: number, body: CleaningApplyBody): Promise<{ cleaning_run_id: number; summary: Record<string, number> }> {
    await this.access.project(caller, projectId, 'images.delete');
    await this.purgeExpired(projectId);
    const planned = await this.plan(projectId, body.actions);
    if (body.preview_token !== undefined && body.preview_token !== planned.token) {
      throw new ConflictError('The project changed since this preview was made; preview again and apply what it shows');
    }
    const summary = summaryOf(planned.changes);
    const now = new Date();
    try {
      const runId = await this.repository.transaction(async (tx) => {
        const touched = [...new Set(planned.changes.flatMap((c) => (c.image_id === undefined ? [] : [c.image_id])))];
        await this.locks.assertNoneLocked(caller, { imageIds: touched }, tx);
        if ((await this.stateDigest(projectId, planned.changes, tx)) !== planned.state) {
          throw new ConflictError('The project changed while the cleaning was being applied; nothing was changed, preview again');
        }
        const records = await this.execute(caller, projectId, planned.changes, now.toISOString(), tx);
        const id = await this.repository.insertRun(
          {
            project_id: projectId,
            user_id: caller.userId,
            actions: JSON.stringify(planned.actions),
            summary: JSON.stringify(summary),
            status: 'applied',
            created_at: now.toISOString(),
            revertible_until: new Date(now.getTime() + REVERT_WINDOW_DAYS * 86_400_000).toISOString(),
            reverted_at: null,
            reverted_by: null,
          },
          tx,
        );
        await this.repository.insertRecords(records.map((r) => ({ ...r, run_id: id })), tx);
        return id;
      });
      return { cleaning_run_id: runId, summary };
    } catch (err) {
      throw translate(err);
    }
  }

  async history(caller: Caller, projectId: number): Promise<CleaningRunOut[]> {
    await this.access.project(caller, projectId, 'project.read');
    await this.purgeExpired(projectId);
    return (await this.repository.runs(projectId, HISTORY_LIMIT)).map(toCleaningRunOut);
  }

  /** Puts back every row the run changed, as it was before, in one transaction; refused (409) if any changed since. */
  async revert(caller: Caller, runId: number): Promise<CleaningRunOut> {
    const run = await this.repository.findRun(runId);
    if (!run) throw NotFoundError.of('Cleaning run', runId);
    const owner = await this.access.project(caller, run.project_id, 'project.read').catch(() => {
      throw NotFoundError.of('Cleaning run', runId);
    });
    await this.access.check(caller, owner, 'images.delete', `Cleaning run ${runId} not found`);
    if (run.status !== 'applied') throw new ConflictError(`Cleaning run ${runId} is ${run.status}; only an applied run can be reverted`);
    const now = new Date().toISOString();
    if (run.revertible_until < now) throw new ConflictError(`Cleaning run ${runId} could be reverted until ${run.revertible_until}`);
    try {
      await this.repository.transaction(async (tx) => {
        const current = await this.repository.findRun(runId, tx);
        if (current?.status !== 'applied') throw new ConflictError(`Cleaning run ${runId} was reverted meanwhile`);
        await this.undo(caller, run.project_id, await this.repository.records(runId, tx), now, tx);
        await this.repository.markRun(runId, { status: 'reverted', reverted_at: now, reverted_by: caller.userId }, tx);
      });
    } catch (err) {
      throw translate(err);
    }
    return toCleaningRunOut((await this.repository.findRun(runId))!);
  }

  // ---- planning

  private async plan(projectId: number, requested: CleaningActionIn[]): Promise<Planned> {
    // Cleaning acts on images and their annotations; no sample modality registers actions yet.
    const available = cleaningActionsOf('image');
    assertKnownIds(requested.map((a) => a.id), available.map((a) => a.id), ['body', 'actions'], 'cleaning action');
    const resolved = requested.map((a, i) => {
      const definition = available.find((d) => d.id === a.id)!;
      return { definition, params: resolveParams(definition.params, a.params, ['body', 'actions', i, 'params']) };
    });
    const { snapshot } = await this.quality.snapshot(projectId);
    resolved.forEach(({ definition, params }, i) => definition.validate?.(snapshot, params, ['body', 'actions', i, 'params']));
    const plan = new Plan(snapshot);
    const lookups = { geometries: (ids: number[]) => this.repository.geometries(projectId, ids) };
    for (const { definition, params } of resolved) {
      plan.action = definition.id;
      await definition.plan(snapshot, params, plan, lookups);
    }
    const changes = plan.finish();
    const actions = resolved.map(({ definition, params }) => ({ id: definition.id, params }));
    const state = await this.stateDigest(projectId, changes, undefined);
    return { actions, changes, state, token: hash(JSON.stringify({ actions, changes, state })) };
  }

  /** A digest of every touched row as `db` sees it: any edit to one of them changes it. */
  private async stateDigest(projectId: number, changes: PlannedChange[], db: Executor | undefined): Promise<string> {
    const imageIds = [...new Set(changes.flatMap((c) => (c.image_id === undefined ? [] : [c.image_id])))].sort((a, b) => a - b);
    const annotationIds = [...new Set(changes.flatMap((c) => (c.annotation_id === undefined ? [] : [c.annotation_id])))].sort((a, b) => a - b);
    const classIds = [...new Set(changes.flatMap((c) => (c.class_id === undefined ? [] : [c.class_id])))].sort((a, b) => a - b);
    const [images, annotations, classes] = await Promise.all([
      this.repository.images(projectId, imageIds, db),
      this.repository.annotations(projectId, annotationIds, db),
      this.repository.classes(projectId, classIds, db),
    ]);
    const text = [
      ...images.map((i) => `i${i.id}:${i.sha256}:${i.split}:${i.review_state}:${i.annotation_count}`),
      ...annotations.map((a) => `a${a.id}:${a.class_id}:${a.updated_at}`),
      ...classes.map((c) => `c${c.id}:${c.name}`),
    ].join('\n');
    return hash(text);
  }

  // ---- applying

  private async execute(caller: Caller, projectId: number, changes: PlannedChange[], now: string, tx: Executor): Promise<Omit<CleaningRecordRow, 'id' | 'run_id'>[]> {
    const records: Omit<CleaningRecordRow, 'id' | 'run_id'>[] = [];
    const revisions: NewRevision[] = [];
    const revision = (row: AnnotationFullRow, action: NewRevision['action'], before: string | null, after: string | null): NewRevision => ({
      annotation_id: row.id,
      image_id: row.image_id,
      project_id: projectId,
      action,
      before,
      after,
      user_id: caller.userId,
      created_at: now,
    });
    const of = (kind: PlannedChange['kind']) => changes.filter((c) => c.kind === kind);

    for (const change of of('update_annotation')) {
      const [before] = await this.repository.annotations(projectId, [change.annotation_id!], tx);
      const set = { ...(change.set?.class_id !== undefined ? { class_id: change.set.class_id } : {}), ...(change.set?.geometry !== undefined ? { geometry: JSON.stringify(change.set.geometry) } : {}) };
      const after = (await this.repository.updateAnnotation(before.id, set, now, tx))!;
      records.push({ kind: 'annotation', ref_id: before.id, before: JSON.stringify(before), after: JSON.stringify(after) });
      revisions.push(revision(after, 'update', stateText(before), stateText(after)));
    }
    const deletedAnnotations = await this.repository.annotations(projectId, of('delete_annotation').map((c) => c.annotation_id!), tx);
    for (const row of deletedAnnotations) {
      records.push({ kind: 'annotation', ref_id: row.id, before: JSON.stringify(row), after: null });
      revisions.push(revision(row, 'delete', stateText(row), null));
    }
    await this.revisions.insertMany(revisions, tx);
    await this.repository.deleteAnnotations(deletedAnnotations.map((r) => r.id), tx);

    for (const change of [...of('move_image'), ...of('mark_image')]) {
      const [before] = await this.repository.images(projectId, [change.image_id!], tx);
      const set = { ...(change.set?.split !== undefined ? { split: change.set.split } : {}), ...(change.set?.review_state !== undefined ? { review_state: change.set.review_state as ImageFullRow['review_state'] } : {}) };
      await this.repository.setImage(before.id, set, tx);
      records.push({ kind: 'image', ref_id: before.id, before: JSON.stringify({ split: before.split, review_state: before.review_state }), after: JSON.stringify({ split: before.split, review_state: before.review_state, ...set }) });
    }
    for (const change of of('rename_class')) {
      const [before] = await this.repository.classes(projectId, [change.class_id!], tx);
      await this.repository.renameClass(before.id, change.set!.name!, tx);
      records.push({ kind: 'class', ref_id: before.id, before: JSON.stringify(before), after: JSON.stringify({ ...before, name: change.set!.name }) });
    }

    const deletedImageIds = of('delete_image').map((c) => c.image_id!);
    const images = await this.repository.images(projectId, deletedImageIds, tx);
    for (const row of await this.repository.annotationsOfImages(projectId, deletedImageIds, tx)) {
      records.push({ kind: 'annotation', ref_id: row.id, before: JSON.stringify(row), after: null });
    }
    for (const row of images) records.push({ kind: 'image', ref_id: row.id, before: JSON.stringify(row), after: null });
    await this.repository.deleteImages(deletedImageIds, tx);

    const classIds = of('delete_class').map((c) => c.class_id!);
    for (const row of await this.repository.classes(projectId, classIds, tx)) records.push({ kind: 'class', ref_id: row.id, before: JSON.stringify(row), after: null });
    await this.repository.deleteClasses(classIds, tx);

    const touched = [...new Set(changes.flatMap((c) => (c.image_id === undefined || deletedImageIds.includes(c.image_id) ? [] : [c.image_id])))];
    await this.repository.recount(projectId, touched, tx);
    return records;
  }

  private async undo(caller: Caller, projectId: number, records: CleaningRecordRow[], now: string, tx: Executor): Promise<void> {
    const parse = <T>(text: string | null) => (text === null ? null : (JSON.parse(text) as T));
    const deleted = (kind: CleaningRecordRow['kind']) => records.filter((r) => r.kind === kind && r.after === null).map((r) => parse<any>(r.before)!);
    const updated = (kind: CleaningRecordRow['kind']) => records.filter((r) => r.kind === kind && r.after !== null);
    const deletedClasses = deleted('class');
    const deletedImages = deleted('image') as ImageFullRow[];
    const deletedAnnotations = deleted('annotation') as AnnotationFullRow[];

    const imageIds = [...new Set([...deletedImages.map((i) => i.id), ...deletedAnnotations.map((a) => a.image_id), ...updated('image').map((r) => r.ref_id)])];
    const liveImageIds = imageIds.filter((id) => !deletedImages.some((i) => i.id === id));
    await this.locks.assertNoneLocked(caller, { imageIds: liveImageIds }, tx);

    const back = (what: string) => new ConflictError(`${what} since the cleaning run; it cannot be reverted`);
    if ((await this.repository.existing('classes', deletedClasses.map((c) => c.id), tx)).size) throw back('A deleted class was re-created');
    if ((await this.repository.existing('images', deletedImages.map((i) => i.id), tx)).size) throw back('A deleted image came back');
    if ((await this.repository.existing('annotations', deletedAnnotations.map((a) => a.id), tx)).size) throw back('A deleted annotation came back');
    const liveImages = new Map((await this.repository.images(projectId, liveImageIds, tx)).map((i) => [i.id, i]));
    if (deletedAnnotations.some((a) => !liveImages.has(a.image_id) && !deletedImages.some((i) => i.id === a.image_id))) throw back('An image was deleted');

    const revisions: NewRevision[] = [];
    await this.repository.insertClasses(deletedClasses, tx);
    await this.repository.insertImages(deletedImages, tx);
    await this.repository.insertAnnotations(deletedAnnotations.sort((a, b) => a.id - b.id), tx);
    for (const row of deletedAnnotations) {
      revisions.push({ annotation_id: row.id, image_id: row.image_id, project_id: projectId, action: 'revert', before: null, after: stateText(row), user_id: caller.userId, created_at: now });
    }
    for (const record of updated('annotation')) {
      const before = parse<AnnotationFullRow>(record.before)!;
      const after = parse<AnnotationFullRow>(record.after)!;
      const [current] = await this.repository.annotations(projectId, [record.ref_id], tx);
      if (!current || current.updated_at !== after.updated_at) throw back(`Annotation ${record.ref_id} was edited`);
      await this.repository.restoreAnnotation({ ...before, updated_at: now }, tx);
      revisions.push({ annotation_id: before.id, image_id: before.image_id, project_id: projectId, action: 'revert', before: stateText(current), after: stateText(before), user_id: caller.userId, created_at: now });
    }
    for (const record of updated('image')) {
      const before = parse<{ split: string | null; review_state: ImageFullRow['review_state'] }>(record.before)!;
      const after = parse<{ split: string | null; review_state: string }>(record.after)!;
      const current = liveImages.get(record.ref_id);
      if (!current || current.split !== after.split || current.review_state !== after.review_state) throw back(`Image ${record.ref_id} was changed`);
      await this.repository.setImage(record.ref_id, before, tx);
    }
    for (const record of updated('class')) {
      const before = parse<{ name: string }>(record.before)!;
      await this.repository.renameClass(record.ref_id, before.name, tx);
    }
    await this.revisions.insertMany(revisions, tx);
    await this.repository.recount(projectId, imageIds, tx);
  }

  /** Closes the revert window of the project's runs that passed it and removes the files of the images they deleted. */
  private async purgeExpired(projectId: number): Promise<void> {
    for (const run of await this.repository.expiredRuns(projectId, new Date().toISOString())) {
      const images = (await this.repository.records(run.id)).filter((r) => r.kind === 'image' && r.after === null).map((r) => JSON.parse(r.before!) as ImageFullRow);
      await this.repository.markRun(run.id, { status: 'expired' });
      for (const image of images) {
        if (await this.repository.shaInUse(projectId, image.sha256)) continue;
        await Promise.all([this.blobs.delete(image.blob_key), this.blobs.delete(image.thumbnail_key)]);
      }
    }
  }
}

/** A rename onto an existing name, or a row that went away meanwhile, is a conflict; nothing was changed. */
function translate(err: unknown): unknown {
  if (isUniqueViolation(err)) return new ConflictError('The cleaning conflicts with the current project (a name or file already taken); nothing was changed');
  if (isForeignKeyViolation(err)) return new ConflictError('The project changed while the cleaning was being applied; nothing was changed, preview again');
  return err;
}
