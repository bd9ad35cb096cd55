import { useEffect, useState } from 'react';
import { api } from '../api.js';
import { ClassesPanel } from '../components/classes-panel.js';
import { ImageGrid, type GridFilter } from '../components/image-grid.js';
import { ErrorBanner, Layout } from '../components/layout.js';
import { VersionsPanel } from '../components/versions-panel.js';
import { Link } from '../router.js';
import type { LabelClass, Project } from '../types.js';

export function ProjectPage({ projectId }: { projectId: number }) {
  const [project, setProject] = useState<Project | null>(null);
  const [classes, setClasses] = useState<LabelClass[]>([]);
  const [filter, setFilter] = useState<GridFilter>({ split: '', annotated: 'all' });
  const [error, setError] = useState<string | null>(null);
  const [reloadKey, setReloadKey] = useState(0);

  const load = () => {
    api.get<Project>(`/api/projects/${projectId}`).then(setProject, (e) => setError((e as Error).message));
    api.get<LabelClass[]>(`/api/projects/${projectId}/classes`).then(setClasses, (e) => setError((e as Error).message));
  };
  useEffect(load, [projectId]);

  return (
    <Layout
      title={project?.name ?? `Project ${projectId}`}
      actions={
        <>
          <Link href={`/projects/${projectId}/upload`} className="button">
            Upload
          </Link>
          <Link href={`/projects/${projectId}/annotate`} className="button primary">
            Annotate
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
          <div className="muted">{project.project_type.replace(/_/g, ' ')}</div>
        </section>
      )}
      <div className="project-layout">
        <div className="grid-column">
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
            <button className="ghost" onClick={() => (setReloadKey(reloadKey + 1), load())}>
              Refresh
            </button>
          </div>
          <ImageGrid projectId={projectId} filter={filter} reloadKey={reloadKey} />
        </div>
        <aside className="side-column">
          <ClassesPanel projectId={projectId} classes={classes} onChange={load} />
          <VersionsPanel projectId={projectId} />
        </aside>
      </div>
    </Layout>
  );
}
