import { useState, type FormEvent } from 'react';
import { ApiError, api, isMissingRoute, upload } from '../api.js';
import { ErrorBanner, Layout } from '../components/layout.js';
import { Link, navigate } from '../router.js';
import type { Project, ProjectType, ResponseOf } from '../types.js';

type ProjectImported = ResponseOf<'/api/projects/import', 'post'>;

const TYPES: { value: ProjectType; label: string }[] = [
  { value: 'object_detection', label: 'Object detection (boxes)' },
  { value: 'instance_segmentation', label: 'Instance segmentation (polygons, masks)' },
  { value: 'semantic_segmentation', label: 'Semantic segmentation' },
  { value: 'classification', label: 'Classification' },
];

function CreateForm() {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [projectType, setProjectType] = useState<ProjectType>('object_detection');
  const [location, setLocation] = useState('');
  const [multiLabel, setMultiLabel] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    try {
      const project = await api.post('/api/projects', { body: { name, description, project_type: projectType, location, ...(projectType === 'classification' ? { multi_label: multiLabel } : {}) } });
      navigate(`/projects/${project.id}/upload`);
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <form className="card form" onSubmit={submit} aria-label="Create project">
      <h2>Create a project</h2>
      <label>
        Name
        <input name="name" required value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Description
        <textarea name="description" value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <label>
        Type
        <select name="project_type" value={projectType} onChange={(e) => setProjectType(e.target.value as ProjectType)}>
          {TYPES.map((t) => (
            <option key={t.value} value={t.value}>
              {t.label}
            </option>
          ))}
        </select>
      </label>
      {projectType === 'classification' && (
        <label>
          Labels per image
          <select name="multi_label" value={multiLabel ? 'multi' : 'single'} onChange={(e) => setMultiLabel(e.target.value === 'multi')}>
            <option value="single">Single-label: one class per image (a class key replaces it)</option>
            <option value="multi">Multi-label: several classes per image (class keys toggle them)</option>
          </select>
        </label>
      )}
      <label>
        Location
        <input name="location" value={location} onChange={(e) => setLocation(e.target.value)} />
      </label>
      <ErrorBanner message={error} />
      <button className="primary" type="submit">
        Create project
      </button>
    </form>
  );
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function ImportForm() {
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState('');
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [imported, setImported] = useState<ProjectImported | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!file) return;
    const form = new FormData();
    if (name) form.append('name', name);
    form.append('file', file);
    setError(null);
    setProgress(0);
    try {
      const project = await upload('/api/projects/import', {}, form, (p) => setProgress(p.total ? p.loaded / p.total : 0)).promise;
      // Something left out or kept with shared bytes is said before leaving the page; a clean import opens the project.
      if (project.import.skipped_count === 0 && project.import.images_sharing_bytes === 0) return navigate(`/projects/${project.id}`);
      setProgress(null);
      setImported(project);
    } catch (err) {
      const e = err as ApiError;
      setProgress(null);
      setError(isMissingRoute(e) ? 'Importing is not available on this server yet (the import route answers 404).' : `Import failed: ${e.message}`);
    }
  };

  return (
    <form className="card form" onSubmit={submit} aria-label="Import project">
      <h2>Import a dataset</h2>
      <p className="muted small">A zip in COCO, YOLO, Pascal VOC, CSV or JSONL layout; the format is detected from its content.</p>
      <label>
        Archive (.zip)
        <input name="file" type="file" accept=".zip,application/zip" required onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
      </label>
      <label>
        Project name (optional)
        <input value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      {progress !== null && <progress value={progress} max={1} />}
      <ErrorBanner message={error} />
      {imported && (
        <div className="small" aria-live="polite" data-testid="import-result">
          <p data-testid="import-counts">
            {plural(imported.import.entries, 'image entry', 'image entries')} read: {plural(imported.import.images_created, 'image')},{' '}
            {imported.import.images_sharing_bytes} of them with the same bytes as another (the file stored once),{' '}
            {plural(imported.import.annotations_created, 'annotation')}. Items left out: {imported.import.skipped_count}.
          </p>
          <ul>
            {imported.import.skipped.map((s, i) => (
              <li key={i}>
                {s.file}: {s.item}: {s.reason}
              </li>
            ))}
          </ul>
          <Link href={`/projects/${imported.id}`} className="button primary">
            Open {imported.name}
          </Link>
        </div>
      )}
      <button className="primary" type="submit" disabled={!file || progress !== null || imported !== null}>
        Import
      </button>
    </form>
  );
}

export function NewProjectPage() {
  return (
    <Layout title="New project">
      <div className="two-col">
        <CreateForm />
        <ImportForm />
      </div>
    </Layout>
  );
}
