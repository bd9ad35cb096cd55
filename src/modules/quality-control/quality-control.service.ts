import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import { imageAgreement, mergeConsensus } from './consensus.logic.js';
import type { Shape } from './shape-scores.logic.js';
import type { AnnotationsService } from '../annotations/annotations.service.js';
import { isSingleLabel } from '../annotations/single-label.logic.js';
import type { DecisionRow, QualityControlRepository, SettingsRow, TaskRow } from './quality-control.repository.js';
import type {
  AgreementQuery,
  AnnotatorOut,
  ConsensusCreate,
  DecisionOut,
  DisagreementOut,
  GroundTruthOut,
  ImageAgreementOut,
  MyScoresOut,
  NextOut,
  QcShape,
  SettingsOut,
  SettingsUpdate,
  TaskListQuery,
  TaskOut,
  TaskTrackOut,
} from './quality-control.schemas.js';
import { frameShapes, framesSave, resolvedShapes, taskTracks, type StoredShape } from './task-tracks.logic.js';
import { analyticsCsv, annotatorFigures, consensusWeights, imageAgreements, type ReviewCounts, type SubmittedVersion } from './quality-report.logic.js';

/** A save counts the time since the task's previous save (or since it was dealt) as active editing, up to this. */
export const ACTIVE_GAP_CAP_MS = 120_000;

const DEFAULTS = { overlap: 1, ground_truth_share: 0, agreement_threshold: 0.7, annotators_see_scores: 0, ground_truth_in_training: 0, queued_through: 0, samples_queued_through: 0 };

const parseShapes = (text: string): QcShape[] => JSON.parse(text) as QcShape[];
const shapesText = (shapes: readonly Shape[]) => JSON.stringify(shapes.map((s) => ({ class_id: s.class_id, annotation_type: s.annotation_type, geometry: s.geometry })));
/** A task's own shapes as stored, a track's keyframe with its track id and flags. */
const storedText = (shapes: readonly StoredShape[]) => JSON.stringify(shapes);

/** Groups rows by user and video: a video frame's task set. */
function byTaskSet<R extends { user_id: number; video_id: number | null }>(rows: readonly R[]): (row: R) => R[] {
  const sets = new Map<string, R[]>();
  for (const r of rows) if (r.video_id !== null) sets.set(`${r.user_id}:${r.video_id}`, [...(sets.get(`${r.user_id}:${r.video_id}`) ?? []), r]);
  return (row) => sets.get(`${row.user_id}:${row.video_id}`) ?? [row];
}

function toTaskOut(row: TaskRow, shapes: QcShape[] = parseShapes(row.shapes)): TaskOut {
  return {
    id: row.id,
    project_id: row.project_id,
    image_id: row.image_id,
    width: row.width,
    height: row.height,
    video_id: row.video_id,
    frame: row.frame,
    status: row.status,
    shapes,
    active_seconds: Math.round(Number(row.active_ms) / 100) / 10,
    created_at: row.created_at,
    updated_at: row.updated_at,
    submitted_at: row.submitted_at,
    review_state: row.review_state,
    review_comment: row.review_comment,
    review_round: Number(row.review_round),
  };
}

/**
 * Labelling quality control (issue 29): ground truth mixed invisibly into annotators' tasks, overlap (N annotators
 * per image, each version kept apart), agreement, consensus decisions and annotator analytics. Figures come from
 * src/lib/agreement (pure); this service reads the rows, checks who may see what and writes decisions.
 */
export class QualityControlService {
  constructor(
    private readonly repo: QualityControlRepository,
    private readonly access: ProjectAccess,
    private readonly annotations: AnnotationsService,
    /** The video's real tracks' shapes on a frame (the tracks module): a frame's ground truth holds them too. */
    private readonly trackShapes: (imageId: number) => Promise<readonly Shape[]>,
    /** Whether a ground-truth task is dealt (a draw with the share's probability); replaceable in tests. */
    private readonly draw: (share: number) => boolean = (share) => Math.random() < share,
  ) {}

  private async settingsOf(projectId: number): Promise<SettingsRow> {
    return (await this.repo.settings(projectId)) ?? { project_id: projectId, ...DEFAULTS, updated_at: '' };
  }

  /** The overlap and ground-truth share the project deals with (samples deal under the same settings). */
  async dealingSettings(projectId: number): Promise<{ overlap: number; ground_truth_share: number }> {
    const { overlap, ground_truth_share } = await this.settingsOf(projectId);
    return { overlap, ground_truth_share };
  }

  private static settingsOut(row: SettingsRow): SettingsOut {
    return {
      overlap: row.overlap,
      ground_truth_share: row.ground_truth_share,
      agreement_threshold: row.agreement_threshold,
      annotators_see_scores: Boolean(row.annotators_see_scores),
      ground_truth_in_training: Boolean(row.ground_truth_in_training),
    };
  }

  async getSettings(caller: Caller, projectId: number): Promise<SettingsOut> {
    await this.access.project(caller, projectId, 'project.update');
    return QualityControlService.settingsOut(await this.settingsOf(projectId));
  }

  async updateSettings(caller: Caller, projectId: number, input: SettingsUpdate): Promise<SettingsOut> {
    await this.access.project(caller, projectId, 'project.update');
    const current = await this.settingsOf(projectId);
    const next: SettingsRow = {
      project_id: projectId,
      overlap: input.overlap ?? current.overlap,
      ground_truth_share: input.ground_truth_share ?? current.ground_truth_share,
      agreement_threshold: input.agreement_threshold ?? current.agreement_threshold,
      annotators_see_scores: input.annotators_see_scores === undefined ? current.annotators_see_scores : Number(input.annotators_see_scores),
      ground_truth_in_training: input.ground_truth_in_training === undefined ? current.ground_truth_in_training : Number(input.ground_truth_in_training),
      updated_at: new Date().toISOString(),
      queued_through: current.queued_through,
      samples_queued_through: current.samples_queued_through,
    };
    // A new overlap changes which images and samples have free slots: the queues are built again (under the dealing lock).
    await this.repo.dealing(projectId, async (tx) => {
      await this.repo.saveSettings(next, tx);
      if (next.overlap !== current.overlap) await this.repo.resetQueue(projectId, tx);
    });
    return QualityControlService.settingsOut(next);
  }

  /** Freezes the images' accepted labels as ground truth; every image must be of the project and approved (422). */
  async markGroundTruth(caller: Caller, projectId: number, imageIds: number[]): Promise<GroundTruthOut[]> {
    await this.access.project(caller, projectId, 'project.update');
    const ids = [...new Set(imageIds)];
    const images = new Map((await this.repo.imagesInProject(projectId, ids)).map((r) => [r.id, r]));
    imageIds.forEach((id, i) => {
      const image = images.get(id);
      if (!image) throw ValidationError.at(['body', 'image_ids', i], `Image ${id} is not an image of project ${projectId}`);
      if (image.review_state !== 'approved') throw ValidationError.at(['body', 'image_ids', i], `Image ${id} is ${image.review_state}: ground truth needs reviewed (approved) labels`);
    });
    const byImage = new Map<number, Shape[]>(ids.map((id) => [id, []]));
    for (const a of await this.repo.accepted(ids)) byImage.get(a.image_id)!.push({ class_id: a.class_id, annotation_type: a.annotation_type, geometry: JSON.parse(a.geometry) as object });
    for (const image of images.values()) if (image.video_id !== null) byImage.get(image.id)!.push(...(await this.trackShapes(image.id)));
    await this.repo.markGroundTruth(projectId, ids.map((id) => ({ image_id: id, shapes: shapesText(byImage.get(id)!) })), caller.userId, new Date().toISOString());
    const marked = new Set(ids);
    return (await this.listGroundTruthRows(projectId)).filter((g) => marked.has(g.image_id));
  }

  async listGroundTruth(caller: Caller, projectId: number): Promise<GroundTruthOut[]> {
    await this.access.project(caller, projectId, 'project.update');
    return this.listGroundTruthRows(projectId);
  }

  private async listGroundTruthRows(projectId: number): Promise<GroundTruthOut[]> {
    return (await this.repo.groundTruth(projectId)).map((g) => ({ image_id: g.image_id, shapes: parseShapes(g.shapes), marked_by: g.marked_by, created_at: g.created_at }));
  }

  async unmarkGroundTruth(caller: Caller, projectId: number, imageId: number): Promise<void> {
    await this.access.project(caller, projectId, 'project.update');
    if (!(await this.repo.unmarkGroundTruth(projectId, imageId))) throw new NotFoundError(`Image ${imageId} is not ground truth of project ${projectId}`);
  }

  /**
   * Deals the caller their next task: their oldest open one if any; else, with the project's ground-truth share, a
   * ground-truth image they have not had, and otherwise the next overlap image. A ground-truth task is dealt only
   * while overlap images remain, so an empty pool never leaves ground truth alone in the queue.
   */
  async next(caller: Caller, projectId: number): Promise<NextOut> {
    await this.access.project(caller, projectId, 'annotations.write');
    const settings = await this.settingsOf(projectId);
    // One deal at a time per project: the open task, the free slot and the insert are read and written together.
    const task = await this.repo.dealing(projectId, async (tx) => {
      const open = await this.repo.openTask(projectId, caller.userId, tx);
      if (open) return open;
      if (settings.overlap <= 1 && settings.ground_truth_share <= 0) {
        throw new ConflictError(`Quality control is off in project ${projectId}: set an overlap or a ground-truth share first`);
      }
      let pool = await this.repo.poolImageFor(projectId, caller.userId, tx);
      while (pool === undefined && (await this.repo.topUpQueue(projectId, settings.overlap, tx))) pool = await this.repo.poolImageFor(projectId, caller.userId, tx);
      if (pool === undefined) return null;
      const groundTruth = settings.ground_truth_share > 0 && this.draw(settings.ground_truth_share) ? await this.repo.groundTruthFor(projectId, caller.userId, tx) : undefined;
      const now = new Date().toISOString();
      const task = await this.repo.createTask(projectId, groundTruth ?? pool, caller.userId, now, tx);
      if (groundTruth === undefined) await this.repo.settleQueue(pool, settings.overlap, tx);
      if (task.video_id !== null) {
        // A video's frame is dealt with the video's other frames the user may have: one task set, one timeline.
        const frames = await this.repo.videoFramesFor(projectId, task.video_id, caller.userId, settings.overlap, settings.ground_truth_share > 0, tx);
        await this.repo.createTasks(projectId, frames.map((f) => f.id), caller.userId, now, tx);
        for (const f of frames) if (!f.ground_truth) await this.repo.settleQueue(f.id, settings.overlap, tx);
      }
      return task;
    });
    return { task: task && (await this.taskOut(task)) };
  }

  /** The task as its annotator sees it (a video frame's with their task tracks on it). */
  private async taskOut(row: TaskRow): Promise<TaskOut> {
    if (row.video_id === null) return toTaskOut(row);
    const set = await this.repo.videoTasks(row.project_id, row.user_id, row.video_id);
    return toTaskOut(row, resolvedShapes([row], () => set)[0]);
  }

  /** The caller's tasks in dealing order; project admins may name another user. */
  async listTasks(caller: Caller, projectId: number, query: TaskListQuery): Promise<TaskOut[]> {
    const project = await this.access.project(caller, projectId, 'annotations.write');
    if (query.user_id !== undefined && query.user_id !== caller.userId) await this.access.project(caller, project.id, 'project.update');
    const rows = await this.repo.listTasks(projectId, query.user_id ?? caller.userId, query.after, query.limit, query.video_id);
    const sets = new Map<number, TaskRow[]>();
    for (const videoId of new Set(rows.flatMap((r) => (r.video_id === null ? [] : [r.video_id])))) sets.set(videoId, await this.repo.videoTasks(projectId, query.user_id ?? caller.userId, videoId));
    const shapes = resolvedShapes(rows, (r) => sets.get(r.video_id!)!);
    return rows.map((r, i) => toTaskOut(r, shapes[i]));
  }

  private async ownTask(caller: Caller, projectId: number, imageId: number): Promise<TaskRow> {
    await this.access.project(caller, projectId, 'annotations.write');
    const task = await this.repo.findTask(projectId, imageId, caller.userId);
    if (!task) throw new NotFoundError(`You have no task on image ${imageId} in project ${projectId}`);
    return task;
  }

  async getTask(caller: Caller, projectId: number, imageId: number): Promise<TaskOut> {
    return this.taskOut(await this.ownTask(caller, projectId, imageId));
  }

  /** The caller's task tracks over the video a task's frame is of (none for an image), keyframes by frame. */
  async taskTracks(caller: Caller, projectId: number, imageId: number): Promise<TaskTrackOut[]> {
    const task = await this.ownTask(caller, projectId, imageId);
    if (task.video_id === null) return [];
    const set = await this.repo.videoTasks(projectId, caller.userId, task.video_id);
    return taskTracks(set.map(frameShapes)).map((t) => ({
      id: t.id,
      class_id: t.keyframes.at(-1)!.class_id,
      keyframes: t.keyframes.map((k) => ({ frame: k.frame, annotation_type: k.annotation_type as QcShape['annotation_type'], geometry: k.geometry, outside: k.outside })),
    }));
  }

  private static activeGap(task: TaskRow, now: Date): number {
    return Math.max(0, Math.min(ACTIVE_GAP_CAP_MS, now.getTime() - Date.parse(task.updated_at)));
  }

  /** Saves the caller's version of the image (class ids of the project, 422 otherwise); a submitted task is 409. */
  async saveTask(caller: Caller, projectId: number, imageId: number, shapes: QcShape[]): Promise<TaskOut> {
    const task = await this.ownTask(caller, projectId, imageId);
    if (task.status === 'submitted') throw new ConflictError(`Your task on image ${imageId} is already submitted`);
    await this.assertClasses(projectId, shapes, ['body', 'shapes']);
    let stored: StoredShape[] = shapes.map(({ class_id, annotation_type, geometry }) => ({ class_id, annotation_type, geometry }));
    if (task.video_id !== null) {
      const others = (await this.repo.videoTasks(projectId, caller.userId, task.video_id)).filter((t) => t.id !== task.id);
      const saved = framesSave(others.map(frameShapes), task.frame ?? 0, shapes);
      if ('duplicate' in saved) throw ValidationError.at(['body', 'shapes', saved.duplicate, 'track_id'], `Track ${shapes[saved.duplicate].track_id} has one shape on a frame`);
      stored = saved;
    } else {
      const tracked = shapes.findIndex((s) => s.track_id !== undefined);
      if (tracked >= 0) throw ValidationError.at(['body', 'shapes', tracked, 'track_id'], `Image ${imageId} is no video frame: its shapes have no track`);
    }
    const now = new Date();
    await this.repo.saveTask(task.id, { shapes: storedText(stored), active_ms: Number(task.active_ms) + QualityControlService.activeGap(task, now), saves: Number(task.saves) + 1, updated_at: now.toISOString() });
    return this.taskOut((await this.repo.findTask(projectId, imageId, caller.userId))!);
  }

  async submitTask(caller: Caller, projectId: number, imageId: number): Promise<TaskOut> {
    const task = await this.ownTask(caller, projectId, imageId);
    if (task.status === 'submitted') throw new ConflictError(`Your task on image ${imageId} is already submitted`);
    const now = new Date();
    // A video frame's task set is submitted whole: its tracks' shapes on each frame come from all of its frames. Each
    // submission waits for a reviewer (`review_state: pending`).
    const ids = task.video_id === null ? [task.id] : (await this.repo.videoTasks(projectId, caller.userId, task.video_id)).map((t) => t.id);
    await this.repo.submitTasks(ids, { active_ms: Number(task.active_ms) + QualityControlService.activeGap(task, now), updated_at: now.toISOString() }, task.id);
    return this.taskOut((await this.repo.findTask(projectId, imageId, caller.userId))!);
  }

  private async assertClasses(projectId: number, shapes: readonly QcShape[], loc: (string | number)[]): Promise<void> {
    const classes = await this.repo.classesOf(projectId);
    const bad = shapes.findIndex((s) => !classes.has(s.class_id));
    if (bad >= 0) throw ValidationError.at([...loc, bad, 'class_id'], `Class ${shapes[bad].class_id} is not a class of project ${projectId}`);
  }

  private async inputs(projectId: number) {
    const [rows, gt, imageReviews, taskReviews] = await Promise.all([this.repo.submitted(projectId), this.repo.groundTruth(projectId), this.repo.reviewCounts(projectId), this.repo.taskReviewCounts(projectId)]);
    const reviews = mergeReviewCounts(imageReviews, taskReviews);
    // A frame's version is what its annotator saw there: plain shapes and their task tracks' shapes on the frame.
    const shapes = resolvedShapes(rows, byTaskSet(rows));
    const versions: SubmittedVersion[] = rows.map((r, i) => ({ image_id: r.image_id, user_id: r.user_id, shapes: shapes[i].map(({ class_id, annotation_type, geometry }) => ({ class_id, annotation_type, geometry })), active_ms: Number(r.active_ms), submitted_at: r.submitted_at ?? '' }));
    const groundTruth = new Map(gt.map((g) => [g.image_id, parseShapes(g.shapes) as Shape[]]));
    return { versions, groundTruth, reviews };
  }

  async agreement(caller: Caller, projectId: number, query: AgreementQuery): Promise<ImageAgreementOut[]> {
    await this.access.project(caller, projectId, 'project.update');
    return this.agreementRows(projectId, query);
  }

  private async agreementRows(projectId: number, query: AgreementQuery): Promise<ImageAgreementOut[]> {
    const settings = await this.settingsOf(projectId);
    const { versions, groundTruth } = await this.inputs(projectId);
    const decided = await this.repo.decidedImages(projectId);
    return imageAgreements(versions, groundTruth, settings.agreement_threshold)
      .map((r) => ({ ...r, decided: decided.has(r.image_id) }))
      .filter((r) => (query.below_threshold === undefined || r.below_threshold === query.below_threshold) && (query.after === undefined || r.image_id > query.after))
      .slice(0, query.limit);
  }

  /** Images below the agreement threshold without a decision, with every version and the merge's proposal. */
  async disagreements(caller: Caller, projectId: number, query: AgreementQuery): Promise<DisagreementOut[]> {
    await this.access.project(caller, projectId, 'reviews.decide');
    const rows = (await this.agreementRows(projectId, { ...query, below_threshold: true })).filter((r) => !r.decided);
    const { versions, groundTruth, reviews } = await this.inputs(projectId);
    const weights = consensusWeights(annotatorFigures(versions, groundTruth, reviews));
    const byImage = new Map<number, SubmittedVersion[]>();
    for (const v of versions) byImage.set(v.image_id, [...(byImage.get(v.image_id) ?? []), v]);
    return rows.map((r) => {
      const list = byImage.get(r.image_id) ?? [];
      return {
        image_id: r.image_id,
        f1: r.f1,
        versions: list.map((v) => ({ user_id: v.user_id, shapes: v.shapes as QcShape[], submitted_at: v.submitted_at || null })),
        proposal: mergeConsensus(list.map((v) => ({ annotator: v.user_id, shapes: v.shapes, weight: weights.get(v.user_id) }))).map(({ class_id, annotation_type, geometry }) => ({ class_id, annotation_type, geometry }) as QcShape),
      };
    });
  }

  /**
   * Writes the accepted labels of an image from its versions (merge, pick) or as a reviewer edited them, through the
   * annotations service (each change in the revision log, counters moved), and records the decision.
   */
  async decide(caller: Caller, projectId: number, input: ConsensusCreate): Promise<DecisionOut> {
    const project = await this.access.project(caller, projectId, 'reviews.decide');
    const [image] = await this.repo.imagesInProject(projectId, [input.image_id]);
    if (!image) throw ValidationError.at(['body', 'image_id'], `Image ${input.image_id} is not an image of project ${projectId}`);
    if (await this.repo.isGroundTruth(input.image_id)) throw ValidationError.at(['body', 'image_id'], `Image ${input.image_id} is ground truth: its labels are the reference`);
    const { versions, groundTruth, reviews } = await this.inputs(projectId);
    const mine = versions.filter((v) => v.image_id === input.image_id);
    const method = input.method ?? 'merge';
    const weights = consensusWeights(annotatorFigures(versions, groundTruth, reviews));
    let after: Shape[];
    if (method === 'edit') {
      if (!input.shapes) throw ValidationError.at(['body', 'shapes'], 'method edit needs shapes', 'missing');
      after = input.shapes;
    } else if (method === 'pick') {
      const picked = mine.find((v) => v.user_id === input.user_id);
      if (input.user_id === undefined || !picked) throw ValidationError.at(['body', 'user_id'], `Image ${input.image_id} has no submitted version of user ${input.user_id ?? '(none given)'}`);
      after = picked.shapes;
    } else {
      if (mine.length === 0) throw ValidationError.at(['body', 'image_id'], `Image ${input.image_id} has no submitted versions to merge`);
      after = mergeConsensus(mine.map((v) => ({ annotator: v.user_id, shapes: v.shapes, weight: weights.get(v.user_id) })));
    }
    await this.assertClasses(projectId, after as QcShape[], ['body', 'shapes']);
    const before = await this.repo.accepted([input.image_id]);
    // Single-label (issue 30): the decision's one class takes the place of the image's class (as a class key does).
    const inPlace = isSingleLabel(project) ? await this.classInPlace(projectId, input.image_id, after) : undefined;
    const created: number[] = [];
    let replaced = false;
    try {
      for (const s of after) {
        const body = { class_id: s.class_id, annotation_type: s.annotation_type as QcShape['annotation_type'], geometry: s.geometry as Record<string, unknown>, source: 'manual' };
        if (inPlace && s.annotation_type === 'classification') replaced = !!(await this.annotations.replace(caller, inPlace.id, body));
        else created.push((await this.annotations.create(caller, input.image_id, body, 'consensus')).id);
      }
    } catch (err) {
      // A shape the image refuses (outside it, say): take back what this decision wrote, so it changes nothing.
      for (const id of created) await this.annotations.delete(caller, id);
      if (replaced && inPlace) await this.annotations.replace(caller, inPlace.id, { ...inPlace, annotation_type: 'classification', geometry: {}, confidence: inPlace.confidence ?? undefined, status: inPlace.status as 'accepted' | 'suggested' });
      throw err;
    }
    for (const a of before) if (a.id !== inPlace?.id) await this.annotations.delete(caller, a.id);
    const row = await this.repo.insertDecision({
      project_id: projectId,
      image_id: input.image_id,
      method,
      picked_user_id: method === 'pick' ? input.user_id! : null,
      agreement: mine.length >= 2 ? imageAgreement(mine.map((v) => ({ annotator: v.user_id, shapes: v.shapes }))).f1 : null,
      before: shapesText(before.map((a) => ({ class_id: a.class_id, annotation_type: a.annotation_type, geometry: JSON.parse(a.geometry) as object }))),
      after: shapesText(after),
      decided_by: caller.userId,
      created_at: new Date().toISOString(),
    });
    const usedWeights = method === 'merge' ? Object.fromEntries(mine.map((v) => [String(v.user_id), weights.get(v.user_id) ?? 1])) : {};
    return toDecisionOut(row, usedWeights);
  }

  /**
   * The image's classification a single-label decision writes its class into (accepted or suggested), or undefined
   * when it has none or the decision gives no class; a decision giving two classes is 409.
   */
  private async classInPlace(projectId: number, imageId: number, after: Shape[]) {
    const labels = after.filter((s) => s.annotation_type === 'classification').length;
    if (labels > 1) {
      throw new ConflictError(`Project ${projectId} is single-label and the decision gives image ${imageId} ${labels} classes: pick one version, or edit the shapes to one class`);
    }
    return labels === 1 ? this.repo.classificationOf(imageId) : undefined;
  }

  async listDecisions(caller: Caller, projectId: number, imageId?: number): Promise<DecisionOut[]> {
    await this.access.project(caller, projectId, 'reviews.decide');
    return (await this.repo.decisions(projectId, imageId)).map((r) => toDecisionOut(r, {}));
  }

  private async annotatorRows(projectId: number): Promise<AnnotatorOut[]> {
    const { versions, groundTruth, reviews } = await this.inputs(projectId);
    const figures = annotatorFigures(versions, groundTruth, reviews);
    const users = await this.repo.users(figures.map((f) => f.user_id));
    return figures.map((f) => ({ ...f, email: users.get(f.user_id)?.email ?? '', display_name: users.get(f.user_id)?.display_name ?? '' }));
  }

  /** Per-annotator analytics (project admins and owners). */
  async annotators(caller: Caller, projectId: number): Promise<AnnotatorOut[]> {
    await this.access.project(caller, projectId, 'project.update');
    return this.annotatorRows(projectId);
  }

  async annotatorsCsv(caller: Caller, projectId: number): Promise<string> {
    return analyticsCsv(await this.annotators(caller, projectId));
  }

  /** The caller's own figures, when the project shows annotators their scores. */
  async myScores(caller: Caller, projectId: number): Promise<MyScoresOut> {
    await this.access.project(caller, projectId, 'project.read');
    const settings = await this.settingsOf(projectId);
    if (!settings.annotators_see_scores) return { visible: false, scores: null };
    const mine = (await this.annotatorRows(projectId)).find((r) => r.user_id === caller.userId);
    return { visible: true, scores: mine ?? null };
  }

  /** Ground-truth image ids of the project that versions must leave out (none when the lead lets them train). */
  async excludedFromTraining(projectId: number): Promise<Set<number>> {
    const settings = await this.settingsOf(projectId);
    if (settings.ground_truth_in_training) return new Set();
    return new Set((await this.repo.groundTruth(projectId)).map((g) => g.image_id));
  }
}

/** Image-review counts and task-review counts per user, as one list the report reads (quality-report.logic reviewRates). */
function mergeReviewCounts(images: readonly ReviewCounts[], tasks: readonly { user_id: number; accepted: number; changes: number }[]): ReviewCounts[] {
  const out = new Map<number, ReviewCounts>(images.map((r) => [r.user_id, { ...r }]));
  for (const t of tasks) {
    const r = out.get(t.user_id) ?? { user_id: t.user_id, submitted: 0, approved: 0, rejected: 0, changes: 0 };
    out.set(t.user_id, { ...r, task_accepted: t.accepted, task_changes: t.changes });
  }
  return [...out.values()];
}

function toDecisionOut(row: DecisionRow, weights: Record<string, number>): DecisionOut {
  return {
    id: row.id,
    image_id: row.image_id,
    method: row.method,
    picked_user_id: row.picked_user_id,
    agreement: row.agreement,
    before: parseShapes(row.before),
    after: parseShapes(row.after),
    weights,
    decided_by: row.decided_by,
    created_at: row.created_at,
  };
}
