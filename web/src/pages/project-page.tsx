import { lazy, Suspense, useEffect, useMemo, useRef, useState } from 'react';
import { api } from '../api.js';
import { ClassesPanel } from '../components/classes-panel.js';
import { ExportPanel } from '../components/export-panel.js';
import { filterFromQuery, filterToQuery, ImageGrid, isFiltered, NO_FILTER, type GridFilter } from '../components/image-grid.js';
import { GridBulkBar } from '../components/grid-bulk-bar.js';
import { useProjectAccess } from '../components/project-access.js';
import { ErrorBanner, Layout } from '../components/layout.js';
import { ModelsPanel } from '../components/models-panel.js';
import { SplitsPanel } from '../components/splits-panel.js';
import { QualityLink } from '../components/team-quality/quality-link.js';
import { VersionsPanel, type Version } from '../components/versions-panel.js';
import { Link, navigate, useLocation } from '../router.js';
import { REVIEW_STATES, type ImageRecord, type LabelClass, type Project, type ReviewState } from '../types.js';

// Loaded when the tab is first opened, so the grid and the editor do not download it.
const StoragesPanel = lazy(() => import('../components/storages-panel.js').then((m) => ({ default: m.StoragesPanel })));
const MembersPanel = lazy(() => import('../components/members-panel.js').then((m) => ({ default: m.MembersPanel })));
// The Health tab brings the charting library; only those who open it download it.
const HealthPanel = lazy(() => import('../components/health-panel.js').then((m) => ({ default: m.HealthPanel })));
// CodeMirror is only downloaded when the Pipelines tab opens.
const PipelinesPanel = lazy(() => import('../components/pipelines-panel.js').then((m) => ({ default: m.PipelinesPanel })));

// Training pages carry the charting library: loaded when their tab is first opened.
const TrainingPanel = lazy(() => import('../components/training-panel.js').then((m) => ({ default: m.TrainingPanel })));
const ExperimentsPanel = lazy(() => import('../components/training-panel.js').then((m) => ({ default: m.ExperimentsPanel })));

const TABS = [
  ['images', 'Images'],
  ['splits', 'Splits'],
  ['versions', 'Versions'],
  ['export', 'Export'],
  ['training', 'Train'],
  ['experiments', 'Experiments'],
  ['models', 'Models'],
  ['health', 'Health'],
  ['pipelines', 'Pipelines'],
  ['members', 'Members'],
  ['storage', 'Storage'],
] as const;
type Tab = (typeof TABS)[number][0];

export function ProjectPage({ projectId }: { projectId: number }) {
  const { query } = useLocation();
  const tab: Tab = TABS.some(([t]) => t === query.get('tab')) ? (query.get('tab') as Tab) : 'images';
  const [project, setProject] = useState<Project | null>(null);
  const [classes, setClasses] = useState<LabelClass[]>([]);
  const [versions, setVersions] = useState<Version[]>([]);
  // The grid's filters live in the URL: opening an image and coming Back returns to the same filters (and scroll).
  // One object per query string: the grid starts over whenever its filter object changes, so a render of this page
  // for any other reason (classes, versions, the role arriving) must hand it the same one.
  const queryText = query.toString();
  const filter = useMemo(() => filterFromQuery(query), [queryText]);
  const setFilter = (next: GridFilter) => {
    const params = filterToQuery(next);
    if (tab !== 'images') params.set('tab', tab);
    navigate(`/projects/${projectId}${params.size ? `?${params}` : ''}`, true);
  };
  const { why, can, access } = useProjectAccess(projectId);
  const [error, setError] = useState<string | null>(null);
  const [reloadKey, setReloadKey] = useState(0);
  // Picking images in the grid (bulk actions) instead of opening them.
  const [selecting, setSelecting] = useState(false);
  const [picked, setPicked] = useState<Set<number>>(new Set());
  // The grid's loaded images, read when "Select all shown" is pressed (a state here would re-render the grid per page).
  const loaded = useRef<readonly ImageRecord[]>([]);

  const load = () => {
    api.get('/api/projects/{id}', { path: { id: projectId } }).then(setProject, (e) => setError((e as Error).message));
    api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then(setClasses, (e) => setError((e as Error).message));
  };
  const refresh = () => (setReloadKey((k) => k + 1), load());
  // A class deleted (or renamed away) while it filters the grid: drop that filter rather than show a 404.
  useEffect(() => {
    if (filter.classId && classes.length > 0 && !classes.some((c) => String(c.id) === filter.classId)) setFilter({ ...filter, classId: '' });
  }, [classes]);
  useEffect(load, [projectId]);
  useEffect(() => {
    // Export offers the ready versions even when the Versions tab was never opened.
    api.get('/api/projects/{project_id}/versions', { path: { project_id: projectId } }).then(setVersions, () => undefined);
  }, [projectId]);

  return (
    <Layout
      title={project?.name ?? `Project ${projectId}`}
      actions={
        <>
          <Link href={`/projects/${projectId}/samples`} className="button">
            Samples
          </Link>
          {/* Review and Assign only for the roles that decide reviews and assign images. */}
          {can('reviews.decide') && (
            <Link href={`/projects/${projectId}/review`} className="button">
              Review
            </Link>
          )}
          {can('assignments.write') && (
            <Link href={`/projects/${projectId}/assign`} className="button">
              Assign
            </Link>
          )}
          <QualityLink projectId={projectId} access={access} />
          <GatedLink href={`/projects/${projectId}/upload`} reason={why('images.write')}>
            Upload
          </GatedLink>
          <GatedLink href={`/projects/${projectId}/annotate`} reason={why('annotations.write')} primary>
            Annotate
          </GatedLink>
          <Link href="/projects/new" className="button ghost">
            New project
          </Link>
        </>
      }
    >
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {project && (
        <section className="stats">
          <div><b>{project.image_count}</b> images</div>
          <div><b>{project.annotated_image_count}</b> annotated</div>
          <div><b>{project.annotation_count}</b> annotations</div>
          <div><b>{project.class_count}</b> classes</div>
          {!!project.sample_count && <div><b>{project.sample_count}</b> samples ({project.labelled_sample_count} labelled)</div>}
          <div className="muted">{project.project_type.replace(/_/g, ' ')}</div>
        </section>
      )}
      <nav className="tabs" role="tablist" aria-label="Project sections">
        {TABS.map(([t, label]) => (
          <button
            key={t}
            role="tab"
            aria-selected={tab === t}
            className={tab === t ? 'active' : ''}
            onClick={() => navigate(`/projects/${projectId}${t === 'images' ? (isFiltered(filter) ? `?${filterToQuery(filter)}` : '') : `?tab=${t}`}`, true)}
          >
            {label}
          </button>
        ))}
      </nav>
      <div className="project-layout">
        <div className="grid-column">
          {tab === 'images' && (
            <>
              <div className="toolbar">
                <select value={filter.split} onChange={(e) => setFilter({ ...filter, split: e.target.value })} aria-label="Split filter">
                  <option value="">All splits</option>
                  <option value="train">Train</option>
                  <option value="valid">Valid</option>
                  <option value="test">Test</option>
                </select>
                <select value={filter.annotated} onChange={(e) => setFilter({ ...filter, annotated: e.target.value as GridFilter['annotated'] })} aria-label="Annotated filter">
                  <option value="all">Annotated or not</option>
                  <option value="yes">Annotated</option>
                  <option value="no">Not annotated</option>
                </select>
                <select value={filter.classId} onChange={(e) => setFilter({ ...filter, classId: e.target.value })} aria-label="Class filter">
                  <option value="">Any class</option>
                  {classes.map((c) => (
                    <option key={c.id} value={String(c.id)}>
                      {c.name}
                    </option>
                  ))}
                </select>
                <select value={filter.reviewState} onChange={(e) => setFilter({ ...filter, reviewState: e.target.value as ReviewState | '' })} aria-label="Review state filter">
                  <option value="">Any review state</option>
                  {REVIEW_STATES.map((r) => (
                    <option key={r} value={r}>
                      {r === 'changes' ? 'changes requested' : r}
                    </option>
                  ))}
                </select>
                {filter.ids && (
                  <span className="filter-chip" data-testid="ids-filter">
                    {filter.ids.label}
                  </span>
                )}
                {isFiltered(filter) && (
                  <button className="ghost" onClick={() => setFilter(NO_FILTER)}>
                    Clear filters
                  </button>
                )}
                <button className="ghost" onClick={refresh}>
                  Refresh
                </button>
                <button className="ghost" aria-pressed={selecting} onClick={() => (setSelecting(!selecting), setPicked(new Set()))}>
                  {selecting ? 'Done selecting' : 'Select'}
                </button>
              </div>
              {selecting && (
                <GridBulkBar projectId={projectId} picked={picked} loaded={() => loaded.current} onPick={setPicked} onDone={refresh} onError={setError}
                  canWrite={can('images.write')} canDelete={can('images.delete')} />
              )}
              <ImageGrid projectId={projectId} filter={filter} reloadKey={reloadKey} scrollKey={`grid:${projectId}:${filterToQuery(filter)}`} classes={classes} onImages={(images) => void (loaded.current = images)}
                selection={selecting ? { selected: picked, toggle: (id) => setPicked((p) => { const next = new Set(p); if (!next.delete(id)) next.add(id); return next; }) } : undefined} />
            </>
          )}
          {tab === 'splits' && <SplitsPanel projectId={projectId} onChange={refresh} />}
          {tab === 'versions' && <VersionsPanel projectId={projectId} onVersions={setVersions} />}
          {tab === 'export' && <ExportPanel projectId={projectId} versions={versions} initialVersion={query.get('version') ?? ''} />}
          {tab === 'training' && (
            <Suspense fallback={<p className="muted">Loading…</p>}>
              <TrainingPanel projectId={projectId} versions={versions} initialVersion={Number(query.get('version')) || undefined} />
            </Suspense>
          )}
          {tab === 'experiments' && (
            <Suspense fallback={<p className="muted">Loading…</p>}>
              <ExperimentsPanel projectId={projectId} />
            </Suspense>
          )}
          {tab === 'models' && <ModelsPanel projectId={projectId} onAnnotated={refresh} />}
          {tab === 'health' && (
            <Suspense fallback={<p className="muted">Loading health…</p>}>
              <HealthPanel
                projectId={projectId}
                onCleaned={refresh}
                onShowImages={(ids, label) =>
                  navigate(`/projects/${projectId}?${filterToQuery({ ...NO_FILTER, ids: { ids: [...ids].sort((a, b) => a - b), label } })}`, true)
                }
              />
            </Suspense>
          )}
          {tab === 'pipelines' && (
            <Suspense fallback={<p className="muted">Loading pipelines…</p>}>
              <PipelinesPanel projectId={projectId} />
            </Suspense>
          )}
          {tab === 'members' && (
            <Suspense fallback={<p className="muted">Loading members…</p>}>
              <MembersPanel projectId={projectId} />
            </Suspense>
          )}
          {tab === 'storage' && (
            <Suspense fallback={<p className="muted">Loading storage…</p>}>
              <StoragesPanel projectId={projectId} />
            </Suspense>
          )}
        </div>
        <aside className="side-column">
          <ClassesPanel projectId={projectId} classes={classes} onChange={load} />
        </aside>
      </div>
    </Layout>
  );
}

/** A link the caller's role may not follow: shown disabled with the reason instead of leading to a 403. */
function GatedLink({ href, reason, primary, children }: { href: string; reason: string | undefined; primary?: boolean; children: string }) {
  if (reason) {
    return (
      <button className={primary ? 'primary' : ''} disabled title={reason} aria-label={`${children} (${reason})`}>
        {children}
      </button>
    );
  }
  return (
    <Link href={href} className={`button${primary ? ' primary' : ''}`}>
      {children}
    </Link>
  );
}
