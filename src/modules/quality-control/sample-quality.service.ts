import type { Caller } from '../../access/caller.js';
import type { ProjectAccess } from '../../access/project-access.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { TextSpan } from './label-agreement.logic.js';
import type { TimeSegment } from './segment-scores.logic.js';
import { sampleReport, sampleScoresCsv, type SampleTruth } from './sample-report.logic.js';
import type { SampleValue } from './sample-value-scores.logic.js';
import { editedLabels } from '../samples/sample-rules.logic.js';
import type { PendingSampleTaskRow, SampleQualityRepository, SampleTaskReviewRow, SampleTaskRow } from './sample-quality.repository.js';
import type { PendingSampleTaskReviewOut, SampleGroundTruthOut, SampleNextOut, SampleReportOut, SampleTaskOut, SampleTaskReviewOut, SampleTaskSave } from './sample-quality.schemas.js';
import type { ReviewedItems } from './task-reviews.service.js';

type Span = TextSpan | TimeSegment;
const spansOf = (text: string | null): Span[] | null => (text === null ? null : (JSON.parse(text) as Span[]));
const isText = (s: Span): s is TextSpan => typeof (s as TextSpan).start === 'number' && typeof (s as TextSpan).end === 'number';
const isTime = (s: Span): s is TimeSegment => typeof (s as TimeSegment).start_s === 'number' && typeof (s as TimeSegment).end_s === 'number';
/** Text spans only, each as {start, end, label}. */
const textSpans = (text: string | null): TextSpan[] | null => spansOf(text)?.filter(isText).map(({ start, end, label }) => ({ start, end, label })) ?? null;
/** Time segments only (audio and video), each as {start_s, end_s, label}. */
const timeSegments = (text: string | null): TimeSegment[] | null => spansOf(text)?.filter(isTime).map(({ start_s, end_s, label }) => ({ start_s, end_s, label })) ?? null;

/** The classes as the API gives them: the list of a multi-label answer, else the one class (as samples do). */
const labelOf = (row: { label: string | null; labels: string | null }): string | string[] | null => (row.labels ? (JSON.parse(row.labels) as string[]) : row.label);
const classList = (row: { label: string | null; labels: string | null }): string[] | null => (row.labels ? (JSON.parse(row.labels) as string[]) : null);
const valueOf = (text: string | null): SampleValue => (text === null ? null : (JSON.parse(text) as SampleValue));

function toTaskOut(row: SampleTaskRow): SampleTaskOut {
  return {
    id: row.id,
    project_id: row.project_id,
    sample_id: row.sample_id,
    status: row.status,
    label: labelOf(row),
    spans: spansOf(row.spans),
    value: valueOf(row.value),
    created_at: row.created_at,
    updated_at: row.updated_at,
    submitted_at: row.submitted_at,
    review_state: row.review_state,
    review_comment: row.review_comment,
    review_round: Number(row.review_round),
  };
}

/** Samples' tasks under review (task-reviews.service.ts): an entry shows the sample's content and the annotator's answer. */
export function sampleTaskReviews(repo: SampleQualityRepository): ReviewedItems<SampleTaskRow, PendingSampleTaskRow, SampleTaskReviewRow, PendingSampleTaskReviewOut, SampleTaskReviewOut> {
  return {
    noun: 'sample',
    key: 'sample_id',
    store: repo,
    pendingOut: (r, common) => ({ ...common, sample_id: r.sample_id, modality: r.modality as PendingSampleTaskReviewOut['modality'], data: JSON.parse(r.data) as Record<string, unknown>, label: labelOf(r), spans: spansOf(r.spans), value: valueOf(r.value) }),
    reviewOut: (r) => ({
      id: r.id, task_id: r.task_id, sample_id: r.sample_id, user_id: r.user_id, round: r.round, decision: r.decision, comment: r.comment,
      label: labelOf(r), spans: spansOf(r.spans), value: valueOf(r.value), reviewed_by: r.reviewed_by, created_at: r.created_at,
    }),
  };
}

/** The project's dealing settings (quality-control.service.ts keeps them, shared by images and samples). */
export type DealingSettings = (projectId: number) => Promise<{ overlap: number; ground_truth_share: number }>;

/**
 * Quality control of samples (issue 29): ground-truth samples (classes, spans and values) mixed invisibly into annotators'
 * tasks with the project's share, overlap with each answer kept apart, and the report (accuracy and token-level F1
 * against the truth, Krippendorff's alpha among annotators). Same settings and roles as the images'.
 */
export class SampleQualityService {
  constructor(
    private readonly repo: SampleQualityRepository,
    private readonly access: ProjectAccess,
    private readonly settings: DealingSettings,
    private readonly draw: (share: number) => boolean = (share) => Math.random() < share,
  ) {}

  /** Freezes the samples' reviewed class and text spans as ground truth; every sample must be of the project and approved. */
  async markGroundTruth(caller: Caller, projectId: number, sampleIds: number[]): Promise<SampleGroundTruthOut[]> {
    await this.access.project(caller, projectId, 'project.update');
    const found = new Map((await this.repo.samplesInProject(projectId, [...new Set(sampleIds)])).map((r) => [r.id, r]));
    sampleIds.forEach((id, i) => {
      const sample = found.get(id);
      if (!sample) throw ValidationError.at(['body', 'sample_ids', i], `Sample ${id} is not a sample of project ${projectId}`);
      if (sample.review_state !== 'approved') throw ValidationError.at(['body', 'sample_ids', i], `Sample ${id} is ${sample.review_state}: ground truth needs reviewed (approved) labels`);
    });
    const rows = [...found.values()].map((s) => {
      const spans = s.modality === 'text' ? textSpans(s.spans) : s.modality === 'audio' || s.modality === 'video' ? timeSegments(s.spans) : null;
      return { sample_id: s.id, label: s.label, labels: s.labels, spans: spans && JSON.stringify(spans), value: s.value };
    });
    await this.repo.markGroundTruth(projectId, rows, caller.userId, new Date().toISOString());
    return (await this.listGroundTruthRows(projectId)).filter((g) => found.has(g.sample_id));
  }

  async listGroundTruth(caller: Caller, projectId: number): Promise<SampleGroundTruthOut[]> {
    await this.access.project(caller, projectId, 'project.update');
    return this.listGroundTruthRows(projectId);
  }

  private async listGroundTruthRows(projectId: number): Promise<SampleGroundTruthOut[]> {
    return (await this.repo.groundTruth(projectId)).map((g) => ({ sample_id: g.sample_id, label: labelOf(g), spans: spansOf(g.spans), value: valueOf(g.value), created_at: g.created_at }));
  }

  /**
   * The caller's open sample task (one given back for changes first, with the reviewer's comment), else a new one (overlap pool, or with the share's probability ground truth): one
   * deal at a time per project, walking the stored queue (qc_sample_queue) as images' dealing does.
   */
  async next(caller: Caller, projectId: number): Promise<SampleNextOut> {
    await this.access.project(caller, projectId, 'annotations.write');
    const settings = await this.settings(projectId);
    const task = await this.repo.dealing(projectId, async (tx) => {
      const open = await this.repo.openTask(projectId, caller.userId, tx);
      if (open) return open;
      if (settings.overlap <= 1 && settings.ground_truth_share <= 0) {
        throw new ConflictError(`Quality control is off in project ${projectId}: set an overlap or a ground-truth share first`);
      }
      let pool = await this.repo.poolSampleFor(projectId, caller.userId, tx);
      while (pool === undefined && (await this.repo.topUpQueue(projectId, settings.overlap, tx))) pool = await this.repo.poolSampleFor(projectId, caller.userId, tx);
      if (pool === undefined) return null;
      const groundTruth = settings.ground_truth_share > 0 && this.draw(settings.ground_truth_share) ? await this.repo.groundTruthFor(projectId, caller.userId, tx) : undefined;
      const task = await this.repo.createTask(projectId, groundTruth ?? pool, caller.userId, new Date().toISOString(), tx);
      if (groundTruth === undefined) await this.repo.settleQueue(pool, settings.overlap, tx);
      return task;
    });
    return { task: task && toTaskOut(task) };
  }

  private async ownTask(caller: Caller, projectId: number, sampleId: number): Promise<SampleTaskRow> {
    await this.access.project(caller, projectId, 'annotations.write');
    const task = await this.repo.findTask(projectId, sampleId, caller.userId);
    if (!task) throw new NotFoundError(`You have no task on sample ${sampleId} in project ${projectId}`);
    return task;
  }

  async getTask(caller: Caller, projectId: number, sampleId: number): Promise<SampleTaskOut> {
    return toTaskOut(await this.ownTask(caller, projectId, sampleId));
  }

  /**
   * Saves the caller's classes (one, or several on a multi-label sample), spans and value (those given), checked by
   * the rules a sample's own labels obey (sample-rules.logic.ts): a submitted task is 409, a span past its end or a
   * value the sample's modality does not take (a transcript on a table row, a rating outside 1–10) 422. Only the task
   * is written, never the sample.
   */
  async saveTask(caller: Caller, projectId: number, sampleId: number, input: SampleTaskSave): Promise<SampleTaskOut> {
    const task = await this.ownTask(caller, projectId, sampleId);
    if (task.status === 'submitted') throw new ConflictError(`Your task on sample ${sampleId} is already submitted`);
    const bad = (input.spans ?? []).findIndex((s) => ('start' in s ? s.end <= s.start : s.end_s <= s.start_s));
    if (bad >= 0) throw ValidationError.at(['body', 'spans', bad, 'end'], 'A span ends after it starts');
    const sample = (await this.repo.sampleContent(projectId, sampleId))!;
    const stored = editedLabels(sample.modality, JSON.parse(sample.data) as Record<string, unknown>, toTaskOut(task), input);
    await this.repo.saveTask(task.id, { label: stored.label, labels: stored.labels, spans: stored.spans, value: stored.value, updated_at: new Date().toISOString() });
    return toTaskOut((await this.repo.findTask(projectId, sampleId, caller.userId))!);
  }

  async submitTask(caller: Caller, projectId: number, sampleId: number): Promise<SampleTaskOut> {
    const task = await this.ownTask(caller, projectId, sampleId);
    if (task.status === 'submitted') throw new ConflictError(`Your task on sample ${sampleId} is already submitted`);
    const now = new Date().toISOString();
    // Each submission, a resubmission after changes were requested too, waits for a reviewer.
    await this.repo.saveTask(task.id, { status: 'submitted', review_state: 'pending', updated_at: now, submitted_at: now });
    return toTaskOut((await this.repo.findTask(projectId, sampleId, caller.userId))!);
  }

  /** Scores against ground truth and review rates per annotator, and agreement among them (project admins). */
  async report(caller: Caller, projectId: number): Promise<SampleReportOut> {
    await this.access.project(caller, projectId, 'project.update');
    const [rows, gt, reviews] = await Promise.all([this.repo.submitted(projectId), this.repo.groundTruth(projectId), this.repo.taskReviewCounts(projectId)]);
    const texts = await this.repo.texts(projectId, [...new Set([...rows.map((r) => r.sample_id), ...gt.map((g) => g.sample_id)])]);
    const truth = new Map<number, SampleTruth>(gt.map((g) => [g.sample_id, {
      label: g.label, labels: classList(g), spans: textSpans(g.spans), text: texts.get(g.sample_id) ?? null, segments: timeSegments(g.spans), value: valueOf(g.value),
    }]));
    const versions = rows.map((r) => ({ sample_id: r.sample_id, user_id: r.user_id, label: r.label, labels: classList(r), spans: textSpans(r.spans), segments: timeSegments(r.spans), value: valueOf(r.value) }));
    return sampleReport(versions, truth, texts, reviews);
  }

  /** The report's per-annotator scores as CSV, with each annotator's email (project admins). */
  async reportCsv(caller: Caller, projectId: number): Promise<string> {
    const { annotators } = await this.report(caller, projectId);
    const users = await this.repo.users(annotators.map((a) => a.user_id));
    return sampleScoresCsv(annotators.map((a) => ({ ...a, email: users.get(a.user_id)?.email ?? '' })));
  }
}
