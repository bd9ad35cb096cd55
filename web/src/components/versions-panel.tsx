import { useEffect, useState } from 'react';
import { Link } from '../router.js';
import { classColor } from '../editor/palette.js';
import { describeStep, ShapesOverlay } from './shapes-overlay.js';
import { useProjectAccess } from './project-access.js';

const colorOf = (name: string) => classColor(name);
import { api, isMissingRoute } from '../api.js';
import { ProgressBar, useJob } from '../jobs.js';
import { navigate } from '../router.js';
import type { RequestOf, ResponseOf } from '../types.js';
import { ErrorBanner } from './layout.js';
import { nest, PipelineForm, type Changes, type PipelineDefaults } from './pipeline-form.js';
import { SPLIT_NAMES } from '../vocabulary.js';

export type Version = ResponseOf<'/api/projects/{project_id}/versions/{version_id}', 'get'>;
type Counts = Version['image_counts'];
type VersionImage = ResponseOf<'/api/projects/{project_id}/versions/{version_id}/images', 'get'>[number];
type Diff = ResponseOf<'/api/projects/{project_id}/versions/{a}/diff/{b}', 'get'>;

const working = (v: Version) => v.status === 'pending' || v.status === 'generating';
const countsText = (c: Counts) => `${c.total} (${c.train} train / ${c.valid} valid / ${c.test} test)`;

/** Dataset versions: list with live progress, the create form generated from /api/pipeline/defaults, lineage and diff. */
export function VersionsPanel({ projectId, onVersions }: { projectId: number; onVersions?: (v: Version[]) => void }) {
  const [versions, setVersions] = useState<Version[] | null>(null);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<number | null>(null);

  const load = () =>
    api.get('/api/projects/{project_id}/versions', { path: { project_id: projectId } }).then(
      (list) => (setVersions(list), onVersions?.(list)),
      (e) => (isMissingRoute(e) ? setMissing(true) : setError((e as Error).message)),
    );
  useEffect(() => void load(), [projectId]);

  if (missing) return <p className="muted">Dataset versions are not available on this server yet.</p>;
  return (
    <section aria-label="Versions" className="stack">
      <ErrorBanner message={error} onClose={() => setError(null)} />
      <CreateVersion projectId={projectId} nextNumber={(versions?.length ?? 0) + 1} onCreated={() => void load()} onError={setError} />
      <div className="card">
        <h3>Versions</h3>
        {versions === null ? (
          <p className="muted small">Loading…</p>
        ) : versions.length === 0 ? (
          <p className="muted small">No versions yet.</p>
        ) : (
          <table className="list" data-testid="versions">
            <thead>
              <tr>
                <th>#</th>
                <th>Name</th>
                <th>Status</th>
                <th>Source images</th>
                <th>Output images</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <VersionRow key={v.id} version={v} onFinished={() => void load()} onOpen={() => setOpen(open === v.id ? null : v.id)} opened={open === v.id} />
              ))}
            </tbody>
          </table>
        )}
      </div>
      {open !== null && versions?.some((v) => v.id === open) && <VersionImages projectId={projectId} version={versions.find((v) => v.id === open)!} />}
      {versions && versions.length >= 2 && <VersionDiff projectId={projectId} versions={versions} />}
    </section>
  );
}

function VersionRow({ version: v, onFinished, onOpen, opened }: { version: Version; onFinished: () => void; onOpen: () => void; opened: boolean }) {
  const { job } = useJob(working(v) ? v.job_id : null, onFinished);
  const status = job && working(v) ? (job.status === 'queued' ? 'pending' : job.status === 'running' ? 'generating' : v.status) : v.status;
  return (
    <tr data-version={v.number}>
      <td>v{v.number}</td>
      <td>{v.name}</td>
      <td>
        <span className={`status ${status}`}>{status}</span>
        {working(v) && <ProgressBar value={job?.progress ?? v.progress} label={`v${v.number} progress`} />}
        {v.error && <div className="small status failed">{v.error}</div>}
      </td>
      <td className="small">{countsText(v.source_counts)}</td>
      <td className="small">{v.status === 'ready' ? countsText(v.image_counts) : '—'}</td>
      <td>
        <button className="small" disabled={v.status !== 'ready'} onClick={onOpen}>
          {opened ? 'Hide images' : 'Images'}
        </button>{' '}
        <button className="small" disabled={v.status !== 'ready'} onClick={() => navigate(`/projects/${v.project_id}?tab=training&version=${v.id}`, true)}>
          Train…
        </button>
      </td>
    </tr>
  );
}

type PreviewOut = ResponseOf<'/api/projects/{project_id}/versions/preview', 'post'>;

function CreateVersion({ projectId, nextNumber, onCreated, onError }: { projectId: number; nextNumber: number; onCreated: () => void; onError: (m: string) => void }) {
  const [defaults, setDefaults] = useState<PipelineDefaults | null>(null);
  const [name, setName] = useState('');
  const [split, setSplit] = useState({ train: 70, valid: 20, test: 10 });
  const [seed, setSeed] = useState('');
  const [pre, setPre] = useState<Changes>({});
  const [aug, setAug] = useState<Changes>({});
  const [busy, setBusy] = useState(false);
  const [sources, setSources] = useState<ResponseOf<'/api/projects/{id}/splits', 'get'> | null>(null);
  const denied = useProjectAccess(projectId).why('versions.write');
  const [preview, setPreview] = useState<PreviewOut | null>(null);
  const runPreview = async () => {
    try {
      const body: Record<string, unknown> = { preprocessing_config: nest(pre), augmentation_config: nest(aug) };
      if (seed !== '') body.seed = Number(seed);
      setPreview(await api.post('/api/projects/{project_id}/versions/preview', { path: { project_id: projectId }, body }));
    } catch (e) {
      onError((e as Error).message);
    }
  };

  useEffect(() => {
    api.get('/api/pipeline/defaults').then(setDefaults, (e) => onError((e as Error).message));
    api.get('/api/projects/{id}/splits', { path: { id: projectId } }).then(setSources, () => undefined);
  }, []);

  const sum = split.train + split.valid + split.test;
  const create = async () => {
    setBusy(true);
    try {
      const body: RequestOf<'/api/projects/{project_id}/versions', 'post'> = {
        name: name.trim() || `Version ${nextNumber}`,
        split_config: split,
        preprocessing_config: nest(pre),
        augmentation_config: nest(aug),
      };
      if (seed !== '') body.seed = Number(seed);
      await api.post('/api/projects/{project_id}/versions', { path: { project_id: projectId }, body });
      setName('');
      onCreated();
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card" aria-label="Create version" onSubmit={(e) => (e.preventDefault(), void create())}>
      <h3>New version</h3>
      <div className="inline-form">
        <label className="small">
          Name
          <input name="version-name" placeholder={`Version ${nextNumber}`} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        {SPLIT_NAMES.map((k) => (
          <label key={k} className="small">
            {k} %
            <input type="number" name={`split-${k}`} min={0} max={100} className="narrow" value={split[k]} onChange={(e) => setSplit({ ...split, [k]: Number(e.target.value) })} />
          </label>
        ))}
        <label className="small">
          Seed
          <input type="number" name="seed" min={0} className="narrow" placeholder="random" value={seed} onChange={(e) => setSeed(e.target.value)} />
        </label>
      </div>
      {sum !== 100 && <p className="small status failed">Percentages add up to {sum}, not 100.</p>}
      <p className="muted small">Images that already have a split keep it; the others are assigned by these percentages.</p>
      {defaults ? (
        <>
          <PipelineForm title="Preprocessing" options={defaults.options.preprocessing_config} changes={pre} onChange={setPre} />
          <PipelineForm title="Augmentation" options={defaults.options.augmentation_config} changes={aug} onChange={setAug} />
        </>
      ) : (
        <p className="muted small">Loading the pipeline options…</p>
      )}
      {sources && sum === 100 && (
        <p className="small" data-testid="expected-output">
          Expected output: <b>{expectedOutputs(sources, split, pre, aug).total}</b> images ({SPLIT_NAMES.map((k) => `${k} ${expectedOutputs(sources, split, pre, aug)[k]}`).join(', ')})
        </p>
      )}
      {denied && <p className="muted small">{denied}</p>}
      <button type="button" disabled={!!denied} title={denied ?? 'Render the first outputs of one image with its boxes, before generating'} onClick={() => void runPreview()}>
        Preview
      </button>{' '}
      <button type="submit" className="primary" disabled={busy || sum !== 100 || !!denied} title={denied}>
        Create version
      </button>
      {preview && (
        <div className="version-preview" data-testid="recipe-preview">
          {preview.outputs.map((o, i) => (
            <figure key={i}>
              <ShapesOverlay src={o.data_url} alt={`Preview ${i + 1}`} width={o.width} height={o.height} maxHeight="220px" shapes={o.annotations.map((a, k) => ({ key: k, type: a.annotation_type, geometry: a.geometry, color: colorOf(a.class_name), label: a.class_name }))} />
              <figcaption className="small muted">{o.lineage.map(describeStep).join(' → ')}</figcaption>
            </figure>
          ))}
        </div>
      )}
    </form>
  );
}

/** A version's output images; picking one shows it with its lineage, the exact steps that made it. */
function VersionImages({ projectId, version }: { projectId: number; version: Version }) {
  const [images, setImages] = useState<VersionImage[] | null>(null);
  const [split, setSplit] = useState('');
  const [picked, setPicked] = useState<VersionImage | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setPicked(null);
    const query = { limit: 60, split: (split || undefined) as 'train' | 'valid' | 'test' | undefined };
    api.get('/api/projects/{project_id}/versions/{version_id}/images', { path: { project_id: projectId, version_id: version.id }, query }).then(setImages, (e) => setError((e as Error).message));
  }, [version.id, split]);
  return (
    <div className="card" aria-label={`Images of v${version.number}`}>
      <h3>
        Images of v{version.number} {version.name}
      </h3>
      <Link className="button small" href={`/projects/${projectId}?tab=export&version=${version.id}`}>
        Export v{version.number}
      </Link>
      <ErrorBanner message={error} onClose={() => setError(null)} />
      <select value={split} onChange={(e) => setSplit(e.target.value)} aria-label="Version split">
        <option value="">All splits</option>
        <option value="train">Train</option>
        <option value="valid">Valid</option>
        <option value="test">Test</option>
      </select>
      <div className="version-images">
        <ul className="plain version-image-list">
          {images?.map((img) => (
            <li key={img.id}>
              <button className={`link${picked?.id === img.id ? ' active' : ''}`} onClick={() => setPicked(img)}>
                {img.filename}
              </button>{' '}
              <span className="muted small">
                {img.split} · {img.annotations.length} ann.
              </span>
            </li>
          ))}
        </ul>
        {picked && (
          <div className="lineage" data-testid="lineage">
            <ShapesOverlay
              src={picked.file_url}
              alt={picked.filename}
              width={picked.width}
              height={picked.height}
              maxHeight="60vh"
              shapes={picked.annotations.map((a, i) => ({ key: i, type: a.annotation_type, geometry: a.geometry, color: colorOf(a.class_name), label: a.class_name }))}
            />
            <p className="small">
              {picked.width}×{picked.height} · {picked.split} · {picked.annotations.length} annotation{picked.annotations.length === 1 ? '' : 's'} · from source image {picked.source_image_id ?? '(deleted)'}
            </p>
            <h4>How it was made</h4>
            <ol className="small" data-testid="lineage-steps">
              {picked.lineage.map((step, i) => (
                <li key={i} title={JSON.stringify(step)}>
                  {describeStep(step)}
                </li>
              ))}
            </ol>
          </div>
        )}
      </div>
    </div>
  );
}

function VersionDiff({ projectId, versions }: { projectId: number; versions: Version[] }) {
  const [a, setA] = useState(versions[versions.length - 2].id);
  const [b, setB] = useState(versions[versions.length - 1].id);
  const [diff, setDiff] = useState<Diff | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setError(null);
    try {
      setDiff(await api.get('/api/projects/{project_id}/versions/{a}/diff/{b}', { path: { project_id: projectId, a, b } }));
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const pick = (value: number, set: (n: number) => void, label: string) => (
    <select value={value} onChange={(e) => (set(Number(e.target.value)), setDiff(null))} aria-label={label}>
      {versions.map((v) => (
        <option key={v.id} value={v.id}>
          v{v.number} {v.name}
        </option>
      ))}
    </select>
  );
  return (
    <div className="card" aria-label="Compare versions">
      <h3>Compare versions</h3>
      <div className="inline-form">
        {pick(a, setA, 'First version')} → {pick(b, setB, 'Second version')}
        <button onClick={() => void run()} disabled={a === b}>
          Compare
        </button>
      </div>
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {diff && (
        <ul className="small" data-testid="diff">
          <li>Recipe changes: {diff.config_changes.length ? diff.config_changes.join(', ') : 'none'}</li>
          <li>
            Source images: +{diff.images.added.length} added, −{diff.images.removed.length} removed, {diff.images.changed.length} changed, {diff.images.unchanged} unchanged
          </li>
          <li>
            Annotations: +{diff.annotations.added}, −{diff.annotations.removed}
          </li>
          <li>
            Output files: {diff.outputs.a} → {diff.outputs.b}, {diff.outputs.identical} identical
          </li>
        </ul>
      )}
    </div>
  );
}

/**
 * The output image count a recipe will give, before generating: the source images per split (unassigned ones spread
 * by the percentages, as the server does up to rounding), times the augmented outputs per image on augmented splits,
 * times the tiles.
 */
export function expectedOutputs(
  sources: { counts: Record<'train' | 'valid' | 'test', number>; unassigned: number },
  split: Record<'train' | 'valid' | 'test', number>,
  pre: Changes,
  aug: Changes,
): Record<'train' | 'valid' | 'test' | 'total', number> {
  const augOn = aug['enabled'] === undefined ? Object.keys(aug).some((k) => k !== 'enabled') : aug['enabled'] === true;
  const per = Number(aug['outputs_per_image'] ?? 3);
  const applyTo = String(aug['apply_to'] ?? 'train');
  const augmented = (k: string) => augOn && (applyTo === 'all' || k === 'train' || (applyTo === 'train_valid' && k === 'valid'));
  const tiles = pre['tile.enabled'] === true ? Number(pre['tile.rows'] ?? 2) * Number(pre['tile.columns'] ?? 2) : 1;
  const out = { train: 0, valid: 0, test: 0, total: 0 };
  let spread = 0;
  for (const k of SPLIT_NAMES) {
    const share = k === 'test' ? sources.unassigned - spread : Math.round((sources.unassigned * split[k]) / 100);
    spread += share;
    out[k] = (sources.counts[k] + share) * (augmented(k) ? per : 1) * tiles;
    out.total += out[k];
  }
  return out;
}
