import { useEffect, useState } from 'react';
import { api } from '../api.js';
import { useProjectAccess } from '../components/project-access.js';
import { ErrorBanner, Layout } from '../components/layout.js';
import { AnnotatorTable, PerClassTable } from '../components/team-quality/annotator-table.js';
import { GroundTruthPanel } from '../components/team-quality/ground-truth-panel.js';
import { QualityCharts } from '../components/team-quality/quality-charts.js';
import { QualitySettings } from '../components/team-quality/quality-settings.js';
import { SampleScores } from '../components/team-quality/sample-scores.js';
import { SampleTaskReviewsPanel } from '../components/team-quality/sample-task-reviews-panel.js';
import { TaskReviewsPanel } from '../components/team-quality/task-reviews-panel.js';
import { Link } from '../router.js';
import type { LabelClass, Project, QcAnnotator, QcSettings } from '../types.js';

/**
 * Team quality (issue 29): for reviewers, the task reviews (submitted quality-control tasks to accept or give back);
 * per-annotator ground-truth scores, agreement and pace, with charts and a CSV export (and
 * for a project with samples, their scores, agreement and CSV), and
 * the controls a lead needs (ground truth, overlap, agreement threshold). Project admins and owners see everyone; an
 * annotator sees only their own row, and only when the lead lets annotators see their scores.
 */
export default function TeamQualityPage({ projectId }: { projectId: number }) {
  const { access, can } = useProjectAccess(projectId);
  const [project, setProject] = useState<Project | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.get('/api/projects/{id}', { path: { id: projectId } }).then(setProject, (e) => setError((e as Error).message));
  }, [projectId]);
  const lead = can('project.update');
  return (
    <Layout
      title={
        <>
          <Link href={`/projects/${projectId}`}>{project?.name ?? `Project ${projectId}`}</Link> · Team quality
        </>
      }
      actions={
        can('reviews.decide') && (
          <Link href={`/projects/${projectId}/quality/disagreements`} className="button">
            Disagreement queue
          </Link>
        )
      }
    >
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {access !== null && can('reviews.decide') && <TaskReviewsPanel projectId={projectId} onError={setError} />}
      {access !== null && can('reviews.decide') && (project?.sample_count ?? 0) > 0 && <SampleTaskReviewsPanel projectId={projectId} onError={setError} />}
      {access === null ? <p className="muted">Loading…</p> : lead ? <LeadView projectId={projectId} samples={(project?.sample_count ?? 0) > 0} onError={setError} /> : <OwnScores projectId={projectId} reviewer={can('reviews.decide')} />}
    </Layout>
  );
}

/** The lead's view; `samples`: the project holds samples, whose report shows below the images'. */
function LeadView({ projectId, samples, onError }: { projectId: number; samples: boolean; onError: (message: string) => void }) {
  const [settings, setSettings] = useState<QcSettings | null>(null);
  const [rows, setRows] = useState<QcAnnotator[] | null>(null);
  const [classes, setClasses] = useState<LabelClass[]>([]);
  const fail = (e: unknown) => onError((e as Error).message);
  const loadRows = () => void api.get('/api/projects/{id}/quality-control/annotators', { path: { id: projectId } }).then(setRows, fail);
  useEffect(() => {
    api.get('/api/projects/{id}/quality-control/settings', { path: { id: projectId } }).then(setSettings, fail);
    api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then(setClasses, fail);
    loadRows();
  }, [projectId]);
  return (
    <div className="stack">
      {settings && <QualitySettings projectId={projectId} settings={settings} onSaved={(s) => (setSettings(s), loadRows())} onError={onError} />}
      <section className="card" aria-label="Annotators">
        <div className="toolbar">
          <h3>Annotators</h3>
          <div className="spacer" />
          <button className="ghost" onClick={loadRows}>
            Refresh
          </button>
          <a className="button" href={`/api/projects/${projectId}/quality-control/annotators/export`} download={`annotators-${projectId}.csv`}>
            Export CSV
          </a>
        </div>
        {rows === null ? <p className="muted">Loading…</p> : <AnnotatorTable rows={rows} />}
      </section>
      {rows && <QualityCharts rows={rows} classes={classes} />}
      {rows && (
        <section className="card" aria-label="Per class">
          <h3>Per class (ground truth)</h3>
          <PerClassTable rows={rows} classes={classes} />
        </section>
      )}
      {samples && <SampleScores projectId={projectId} onError={onError} />}
      <GroundTruthPanel projectId={projectId} onChange={loadRows} onError={onError} />
    </div>
  );
}

/** An annotator's own row, when the project shows annotators their scores; otherwise why there is nothing. */
function OwnScores({ projectId, reviewer }: { projectId: number; reviewer: boolean }) {
  const [mine, setMine] = useState<{ visible: boolean; scores: QcAnnotator | null } | null>(null);
  useEffect(() => {
    api.get('/api/projects/{id}/quality-control/my-scores', { path: { id: projectId } }).then(setMine, () => setMine({ visible: false, scores: null }));
  }, [projectId]);
  if (mine === null) return <p className="muted">Loading…</p>;
  if (!mine.visible) {
    return (
      <p className="muted" data-testid="quality-denied">
        {reviewer ? 'The rest of Team quality (scores, analytics) is for project admins and owners.' : 'Team quality is for project admins and owners.'}
      </p>
    );
  }
  if (!mine.scores) return <p className="muted">You have no submitted tasks to score yet.</p>;
  return (
    <section className="card" aria-label="My scores">
      <h3>My scores</h3>
      <AnnotatorTable rows={[mine.scores]} />
    </section>
  );
}
