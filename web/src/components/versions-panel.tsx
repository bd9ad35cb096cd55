import { useEffect, useState } from 'react';
import { api, isMissingRoute } from '../api.js';
import { ErrorBanner } from './layout.js';

interface Version {
  id: number;
  number: number;
  name: string;
  status: string;
  image_counts?: { train: number; valid: number; test: number };
}

interface ExportResult {
  filename: string;
  url: string;
  format: string;
  size_bytes: number;
  image_count: number;
  annotation_count: number;
}

/** Versions and export, shown only when the server has those routes (they land with the versions issue). */
export function VersionsPanel({ projectId }: { projectId: number }) {
  const [versions, setVersions] = useState<Version[] | null>(null);
  const [missing, setMissing] = useState(false);
  const [name, setName] = useState('');
  const [split, setSplit] = useState({ train: 70, valid: 20, test: 10 });
  const [format, setFormat] = useState('coco');
  const [versionId, setVersionId] = useState('');
  const [exported, setExported] = useState<ExportResult | null>(null);
  const [exportMissing, setExportMissing] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = () =>
    api.get<Version[]>(`/api/projects/${projectId}/versions`).then(setVersions, (e) => {
      if (isMissingRoute(e)) setMissing(true);
      else setError((e as Error).message);
    });
  useEffect(() => void load(), [projectId]);

  const create = async () => {
    setError(null);
    try {
      await api.post(`/api/projects/${projectId}/versions`, { name: name || `Version ${(versions?.length ?? 0) + 1}`, notes: '', split_config: split, preprocessing_config: null, augmentation_config: {} });
      setName('');
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const runExport = async () => {
    setError(null);
    setExported(null);
    try {
      const body: Record<string, unknown> = { format, include_unannotated: true };
      if (versionId) body.version_id = Number(versionId);
      setExported(await api.post<ExportResult>(`/api/projects/${projectId}/export`, body));
    } catch (e) {
      if (isMissingRoute(e)) setExportMissing(true);
      else setError((e as Error).message);
    }
  };

  return (
    <section className="card" aria-label="Versions and export">
      <h3>Versions</h3>
      {missing ? (
        <p className="muted small">Dataset versions are not available on this server yet.</p>
      ) : versions === null ? (
        <p className="muted small">Loading…</p>
      ) : (
        <>
          <ul className="plain">
            {versions.map((v) => (
              <li key={v.id}>
                v{v.number} {v.name} — <span className={`status ${v.status}`}>{v.status}</span>
                {v.image_counts && ` · ${v.image_counts.train}/${v.image_counts.valid}/${v.image_counts.test}`}
              </li>
            ))}
          </ul>
          <div className="inline-form">
            <input placeholder="Version name" value={name} onChange={(e) => setName(e.target.value)} />
            {(['train', 'valid', 'test'] as const).map((k) => (
              <label key={k} className="small">
                {k}
                <input type="number" min={0} max={100} className="narrow" value={split[k]} onChange={(e) => setSplit({ ...split, [k]: Number(e.target.value) })} />
              </label>
            ))}
            <button onClick={() => void create()}>Create version</button>
          </div>
        </>
      )}
      <h3>Export</h3>
      {exportMissing ? (
        <p className="muted small">Export is not available on this server yet.</p>
      ) : (
        <div className="inline-form">
          <select value={format} onChange={(e) => setFormat(e.target.value)} aria-label="Export format">
            <option value="coco">COCO JSON</option>
            <option value="yolo">YOLO</option>
            <option value="jsonl">JSONL</option>
            <option value="csv">CSV</option>
          </select>
          <select value={versionId} onChange={(e) => setVersionId(e.target.value)} aria-label="Version to export">
            <option value="">Current annotations</option>
            {versions?.map((v) => (
              <option key={v.id} value={v.id}>
                v{v.number} {v.name}
              </option>
            ))}
          </select>
          <button onClick={() => void runExport()}>Export</button>
        </div>
      )}
      {exported && (
        <p className="small">
          <a href={exported.url} download={exported.filename}>
            Download {exported.filename}
          </a>{' '}
          ({exported.image_count} images, {exported.annotation_count} annotations, {Math.ceil(exported.size_bytes / 1024)} KiB)
        </p>
      )}
      <ErrorBanner message={error} onClose={() => setError(null)} />
    </section>
  );
}
