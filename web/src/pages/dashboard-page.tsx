import { useEffect, useMemo, useState } from 'react';
import { ApiError, api } from '../api.js';
import { ErrorBanner, Layout } from '../components/layout.js';
import { Link } from '../router.js';
import type { ImageRecord, Project, Stats } from '../types.js';

function ProjectThumbnail({ project }: { project: Project }) {
  const [imageId, setImageId] = useState<number | null>(null);
  useEffect(() => {
    if (project.image_count === 0) return;
    api.get('/api/projects/{id}/images', { path: { id: project.id }, query: { limit: 1 } }).then(
      (images) => setImageId(images[0]?.id ?? null),
      () => setImageId(null),
    );
  }, [project.id, project.image_count]);
  if (imageId === null) return <div className="thumb empty">{project.image_count === 0 ? 'No images' : ''}</div>;
  return <img className="thumb" src={`/api/images/${imageId}/thumbnail`} alt="" loading="lazy" />;
}

export function DashboardPage() {
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [stats, setStats] = useState<Stats | null>(null);
  const [search, setSearch] = useState('');
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [error, setError] = useState<string | null>(null);

  const load = () => {
    api.get('/api/projects').then(setProjects, (e: ApiError) => setError(e.message));
    api.get('/api/stats').then(setStats, () => setStats(null));
  };
  useEffect(load, []);

  const visible = useMemo(() => {
    const q = search.trim().toLowerCase();
    return (projects ?? []).filter((p) => !q || p.name.toLowerCase().includes(q) || p.description?.toLowerCase().includes(q));
  }, [projects, search]);

  const toggle = (id: number) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };

  const bulkDelete = async () => {
    if (!confirm(`Delete ${selected.size} project(s) with all their images and annotations?`)) return;
    try {
      await api.post('/api/projects/bulk-delete', { body: { ids: [...selected] } });
      setSelected(new Set());
      load();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <Layout
      title="Projects"
      actions={
        <Link href="/projects/new" className="button primary">
          New project
        </Link>
      }
    >
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {stats && (
        <section className="stats" aria-label="Instance statistics">
          <div><b>{stats.project_count}</b> projects</div>
          <div><b>{stats.total_images}</b> images</div>
          <div><b>{stats.annotated_images}</b> annotated</div>
          <div><b>{stats.total_annotations}</b> annotations</div>
        </section>
      )}
      <div className="toolbar">
        <input type="search" placeholder="Search projects" value={search} onChange={(e) => setSearch(e.target.value)} aria-label="Search projects" />
        {selected.size > 0 && (
          <button className="danger" onClick={bulkDelete}>
            Delete {selected.size} selected
          </button>
        )}
      </div>
      {projects === null ? (
        <p className="muted">Loading…</p>
      ) : visible.length === 0 ? (
        <p className="muted">{projects.length === 0 ? 'No projects yet: create one to start labelling.' : 'No project matches the search.'}</p>
      ) : (
        <div className="project-grid">
          {visible.map((p) => (
            <div key={p.id} className={`card project-card${selected.has(p.id) ? ' selected' : ''}`}>
              <input type="checkbox" className="pick" checked={selected.has(p.id)} onChange={() => toggle(p.id)} aria-label={`Select ${p.name}`} />
              <Link href={`/projects/${p.id}`} className="project-link">
                <ProjectThumbnail project={p} />
                <div className="project-name">{p.name}</div>
              </Link>
              <div className="muted small">{p.project_type.replace(/_/g, ' ')}</div>
              <div className="counts small">
                <span>{p.image_count} images</span>
                <span>{p.annotated_image_count} annotated</span>
                <span>{p.class_count} classes</span>
              </div>
            </div>
          ))}
        </div>
      )}
    </Layout>
  );
}
