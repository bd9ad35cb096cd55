import { useEffect, useRef, useState } from 'react';
import { api, isMissingRoute } from '../api.js';
import type { RequestOf, ResponseOf } from '../types.js';
import { ErrorBanner } from './layout.js';
import type { Version } from './versions-panel.js';

type ExportRequest = RequestOf<'/api/projects/{id}/export', 'post'>;
type ExportResult = ResponseOf<'/api/projects/{id}/export', 'post'>;
type Format = ExportRequest['format'];

const FORMATS: [Format, string][] = [
  ['coco', 'COCO JSON'],
  ['coco_zip', 'COCO with images (zip)'],
  ['yolo', 'YOLO (zip)'],
  ['jsonl', 'JSONL'],
  ['csv', 'CSV'],
  ['voc', 'Pascal VOC (zip)'],
  ['masks', 'Segmentation masks (zip)'],
  ['folders', 'Class folders (zip)'],
  ['yolo_ultralytics', 'Ultralytics YOLO, train-ready (zip)'],
  ['cvat', 'CVAT for images 1.1 (zip)'],
  ['datumaro', 'Datumaro (zip)'],
  ['labelme', 'LabelMe (zip)'],
  ['createml', 'CreateML (zip)'],
];

const size = (bytes: number) => (bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`);

/** Export the current annotations or a ready version in one of the server's formats, with a download link. */
export function ExportPanel({ projectId, versions, initialVersion = '' }: { projectId: number; versions: Version[]; initialVersion?: string }) {
  const [format, setFormat] = useState<Format>('coco');
  // Defaults to the version the user was looking at (the Versions tab's "Export vN" link), else the latest ready
  // version (what a training set is made of), else the current project; a choice made in the form stays.
  const [versionId, setVersionId] = useState(initialVersion);
  const chosen = useRef(initialVersion !== '');
  useEffect(() => {
    if (chosen.current) return;
    const latest = versions.filter((v) => v.status === 'ready').sort((a, b) => b.number - a.number)[0];
    setVersionId(latest ? String(latest.id) : '');
  }, [versions]);
  const [includePredictions, setIncludePredictions] = useState(false);
  const [includeUnannotated, setIncludeUnannotated] = useState(true);
  const [exported, setExported] = useState<ExportResult | null>(null);
  const [missing, setMissing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const run = async () => {
    setError(null);
    setExported(null);
    setBusy(true);
    try {
      const body: ExportRequest = { format, include_unannotated: includeUnannotated };
      if (versionId) body.version_id = Number(versionId);
      else if (includePredictions) body.include_predictions = true;
      setExported(await api.post('/api/projects/{id}/export', { path: { id: projectId }, body }));
    } catch (e) {
      if (isMissingRoute(e)) setMissing(true);
      else setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  if (missing) return <p className="muted">Export is not available on this server yet.</p>;
  return (
    <section className="card" aria-label="Export">
      <h3>Export</h3>
      <form className="inline-form" onSubmit={(e) => (e.preventDefault(), void run())}>
        <label className="small">
          From
          <select value={versionId} onChange={(e) => ((chosen.current = true), setVersionId(e.target.value))} aria-label="Version to export">
            <option value="">Current project</option>
            {versions
              .filter((v) => v.status === 'ready')
              .map((v) => (
                <option key={v.id} value={v.id}>
                  v{v.number} {v.name}
                </option>
              ))}
          </select>
        </label>
        <label className="small">
          Format
          <select value={format} onChange={(e) => setFormat(e.target.value as Format)} aria-label="Export format">
            {FORMATS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label className="check small">
          <input type="checkbox" checked={includeUnannotated} onChange={(e) => setIncludeUnannotated(e.target.checked)} />
          Include unannotated images
        </label>
        <label className="check small" title={versionId ? 'A version holds what it froze' : undefined}>
          <input type="checkbox" checked={includePredictions && !versionId} disabled={!!versionId} onChange={(e) => setIncludePredictions(e.target.checked)} />
          Include unaccepted model suggestions
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Exporting…' : 'Export'}
        </button>
      </form>
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {exported && (
        <p data-testid="export-result">
          <a href={exported.url} download={exported.filename} className="whole-name" data-testid="export-filename">
            Download {exported.filename}
          </a>{' '}
          <span className="muted small">
            ({exported.image_count} images, {exported.annotation_count} annotations, {size(exported.size_bytes)})
          </span>
        </p>
      )}
    </section>
  );
}
