import { useEffect, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { ApiError, api, upload } from '../api.js';
import { ErrorBanner, Layout } from '../components/layout.js';
import { Link } from '../router.js';
import type { ImportIntoResult, UploadResponse } from '../types.js';
import { zipFiles, zipRefusal, type NamedFile } from '../zip-files.js';

type State = 'queued' | 'uploading' | 'created' | 'duplicate' | 'rejected' | 'failed';

interface Item {
  key: number;
  file: File;
  name: string;
  state: State;
  progress: number;
  detail?: string;
}

const PARALLEL = 4;

/** Every file below a dropped folder (webkitGetAsEntry), read in batches as the directory reader requires. */
async function filesOf(entry: FileSystemEntry, prefix = ''): Promise<NamedFile[]> {
  if (entry.isFile) {
    const file = await new Promise<File>((res, rej) => (entry as FileSystemFileEntry).file(res, rej));
    return [{ file, name: prefix + file.name }];
  }
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  const out: NamedFile[] = [];
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej));
    if (batch.length === 0) return out;
    for (const child of batch) out.push(...(await filesOf(child, `${prefix}${entry.name}/`)));
  }
}

/** Files that carry labels in the layouts the importer reads (YOLO .txt, COCO/LabelMe .json, VOC .xml, data.yaml, CSV). */
const LABEL_FILE = /\.(txt|json|xml|ya?ml|csv)$/i;

type NewClasses = 'create' | 'refuse';

/** What to do with dataset classes the project does not have (the import's `new_classes` part). */
function NewClassesChoice({ value, onChange, disabled }: { value: NewClasses; onChange: (v: NewClasses) => void; disabled?: boolean }) {
  return (
    <label>
      Classes the project does not have
      <select value={value} onChange={(e) => onChange(e.target.value as NewClasses)} disabled={disabled}>
        <option value="create">Create them</option>
        <option value="refuse">Refuse the import</option>
      </select>
    </label>
  );
}

function importFailure(err: ApiError): string {
  const why = err.status === 413 && !(err.body as { detail?: unknown } | null)?.detail ? "the archive is over the server's import size limit" : err.message;
  return `Import failed, nothing was changed: ${why}${err.status ? ` (HTTP ${err.status})` : ''}`;
}

/** Posts a labelled dataset archive to the project's import route. */
function importInto(projectId: number, archive: Blob, fileName: string, newClasses: NewClasses, onProgress: (fraction: number) => void) {
  const form = new FormData();
  form.append('new_classes', newClasses);
  form.append('file', archive, fileName);
  return upload('/api/projects/{id}/import', { path: { id: projectId } }, form, (p) => onProgress(p.total ? p.loaded / p.total : 0)).promise;
}

/** A zip of images with their label files, added to the project by the import route (not the image upload). */
function LabelledImport({ projectId }: { projectId: number }) {
  const [file, setFile] = useState<File | null>(null);
  const [newClasses, setNewClasses] = useState<NewClasses>('create');
  const [progress, setProgress] = useState<number | null>(null);
  const [result, setResult] = useState<ImportIntoResult | null>(null);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!file) return;
    setError(null);
    setResult(null);
    setProgress(0);
    try {
      setResult(await importInto(projectId, file, file.name, newClasses, setProgress));
    } catch (err) {
      setError(importFailure(err as ApiError));
    } finally {
      setProgress(null);
    }
  };

  return (
    <form className="card form labelled-import" onSubmit={submit} aria-label="Import labelled dataset">
      <h2>Labelled dataset (zip)</h2>
      <p className="muted small">
        Images with their labels (COCO, YOLO, Pascal VOC, masks, …), zipped; the format is detected. Classes are matched to this
        project's by name. Every image the archive lists is kept with its own labels; one whose bytes the project already has gets
        its labels added to that image.
      </p>
      <label>
        Archive (.zip)
        <input name="file" type="file" accept=".zip,application/zip" onChange={(e) => setFile(e.target.files?.[0] ?? null)} data-testid="dataset-input" />
      </label>
      <NewClassesChoice value={newClasses} onChange={setNewClasses} />
      {progress !== null && <progress value={progress} max={1} />}
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {result && <ImportReport result={result} />}
      <button className="primary" type="submit" disabled={!file || progress !== null}>
        Import
      </button>
    </form>
  );
}

/** What an import made of each entry of the archive: added, merged, kept with shared bytes, and what was left out. */
function ImportReport({ result }: { result: ImportIntoResult }) {
  const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  return (
    <div className="small" aria-live="polite" data-testid="import-result">
      <p data-testid="import-counts">
        {plural(result.entries, 'image entry', 'image entries')} read: {plural(result.images_created, 'image')} added,{' '}
        {result.images_merged} already in the project (labels added), {plural(result.annotations_created, 'annotation')}.
      </p>
      {result.images_sharing_bytes > 0 && (
        <>
          <p data-testid="import-shared">
            {plural(result.images_sharing_bytes, 'image has', 'images have')} the same bytes as another image: kept, each with its own
            labels, the file stored once (the Exact duplicates check lists them).
          </p>
          <ul>
            {result.shared_bytes.map((s, i) => (
              <li key={i}>
                {s.file}: same bytes as {s.same_as}
              </li>
            ))}
          </ul>
        </>
      )}
      {result.classes_created.length > 0 && <p>Classes created: {result.classes_created.join(', ')}</p>}
      {result.classes_matched.length > 0 && <p>Classes matched: {result.classes_matched.join(', ')}</p>}
      {result.skipped_count > 0 ? (
        <>
          <p data-testid="import-skipped">Left out ({result.skipped_count}):</p>
          <ul>
            {result.skipped.map((s, i) => (
              <li key={i}>
                {s.file}: {s.item}: {s.reason}
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p data-testid="import-skipped">Nothing left out.</p>
      )}
    </div>
  );
}

type FolderImport = { phase: 'zipping'; done: number; total: number } | { phase: 'uploading'; progress: number };

/**
 * A selection with label files in it: imported with its labels (zipped here, each file under its path in the
 * selection, and sent to the import route), or its images uploaded without them.
 */
function LabelsFound({ projectId, files, labels, onImagesOnly, onClose }: {
  projectId: number;
  files: NamedFile[];
  labels: number;
  onImagesOnly: () => void;
  onClose: () => void;
}) {
  const [newClasses, setNewClasses] = useState<NewClasses>('create');
  const [running, setRunning] = useState<FolderImport | null>(null);
  const [result, setResult] = useState<ImportIntoResult | null>(null);
  const [error, setError] = useState<string | null>(null);

  const importWithLabels = async () => {
    setError(null);
    setResult(null);
    const refusal = zipRefusal(files);
    if (refusal) {
      setError(refusal);
      return;
    }
    setRunning({ phase: 'zipping', done: 0, total: files.length });
    try {
      const archive = await zipFiles(files, (done) => setRunning({ phase: 'zipping', done, total: files.length }));
      setRunning({ phase: 'uploading', progress: 0 });
      const folder = files[0].name.includes('/') ? files[0].name.split('/')[0] : 'selection';
      setResult(await importInto(projectId, archive, `${folder}.zip`, newClasses, (progress) => setRunning({ phase: 'uploading', progress })));
    } catch (err) {
      setError(err instanceof ApiError ? importFailure(err) : `Could not zip the selection, nothing was sent: ${(err as Error).message}`);
    } finally {
      setRunning(null);
    }
  };

  const busy = running !== null;
  return (
    <div className="banner warn" role="status" data-testid="labels-found">
      {result ? (
        <p>Imported with labels: the selection’s {files.length} files, zipped here, went to the project’s import.</p>
      ) : (
        <p>
          This selection has {labels} label file{labels === 1 ? '' : 's'} beside its images. “Import with labels” adds the images with
          their labels (COCO, YOLO, Pascal VOC, masks, …; the format is detected), classes matched to this project’s by name; “Upload
          the images only” leaves the labels out.
        </p>
      )}
      {!result && <NewClassesChoice value={newClasses} onChange={setNewClasses} disabled={busy} />}
      {running?.phase === 'zipping' && (
        <p className="small" data-testid="labels-progress">
          Zipping {running.done} of {running.total} files… <progress value={running.done} max={running.total} />
        </p>
      )}
      {running?.phase === 'uploading' && (
        <p className="small" data-testid="labels-progress">
          Uploading and importing… <progress value={running.progress} max={1} />
        </p>
      )}
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {result && <ImportReport result={result} />}
      <div>
        {result ? (
          <button onClick={onClose}>Close</button>
        ) : (
          <>
            <button className="primary" onClick={() => void importWithLabels()} disabled={busy}>
              Import with labels
            </button>{' '}
            <button onClick={onImagesOnly} disabled={busy}>
              Upload the images only
            </button>{' '}
            <button onClick={onClose} disabled={busy}>
              Cancel
            </button>
          </>
        )}
      </div>
    </div>
  );
}

export function UploadPage({ projectId }: { projectId: number }) {
  const [items, setItems] = useState<Item[]>([]);
  const [dragging, setDragging] = useState(false);
  /** A dropped or chosen selection with label files in it, held until the user says what to do with it. */
  const [withLabels, setWithLabels] = useState<{ key: number; files: NamedFile[]; labels: number } | null>(null);
  const itemsRef = useRef<Item[]>([]);
  const active = useRef(0);
  const nextKey = useRef(1);
  /** The project's name, in the title: the page says where the files go. */
  const [projectName, setProjectName] = useState<string | null>(null);
  useEffect(() => {
    api.get('/api/projects/{id}', { path: { id: projectId } }).then((p) => setProjectName(p.name), () => undefined);
  }, [projectId]);

  const update = (key: number, patch: Partial<Item>) => {
    itemsRef.current = itemsRef.current.map((i) => (i.key === key ? { ...i, ...patch } : i));
    setItems(itemsRef.current);
  };

  const pump = () => {
    while (active.current < PARALLEL) {
      const item = itemsRef.current.find((i) => i.state === 'queued');
      if (!item) return;
      active.current++;
      update(item.key, { state: 'uploading', progress: 0, detail: undefined });
      const form = new FormData();
      form.append('files', item.file, item.name.split('/').pop() ?? item.name);
      upload('/api/projects/{id}/images', { path: { id: projectId } }, form, (p) => update(item.key, { progress: p.total ? p.loaded / p.total : 0 }))
        .promise.then(
          (res) => {
            const result = res.results?.[0];
            const state: State = result?.outcome ?? (res.created ? 'created' : res.duplicates ? 'duplicate' : 'rejected');
            update(item.key, { state, progress: 1, detail: result?.detail ?? (state === 'duplicate' ? 'Already in this project' : undefined) });
          },
          (err: ApiError) => {
            // A network failure can be retried as is; an answer from the server is a refusal with its reason.
            if (err.status === 0) update(item.key, { state: 'failed', detail: err.message });
            else update(item.key, { state: 'rejected', detail: `${err.message} (HTTP ${err.status})` });
          },
        )
        .finally(() => {
          active.current--;
          pump();
        });
    }
  };

  const enqueue = (files: NamedFile[]) => {
    const fresh = files.map(({ file, name }) => ({ key: nextKey.current++, file, name, state: 'queued' as State, progress: 0 }));
    itemsRef.current = itemsRef.current.concat(fresh);
    setItems(itemsRef.current);
    pump();
  };

  // The image upload cannot take label files: a selection with some is held until the user chooses to import it with
  // them or to upload its images only.
  const add = (files: NamedFile[]) => {
    const labels = files.filter((f) => LABEL_FILE.test(f.name)).length;
    if (labels > 0) setWithLabels({ key: nextKey.current++, files, labels });
    else enqueue(files);
  };

  const imagesOnly = () => {
    if (withLabels) enqueue(withLabels.files.filter((f) => !LABEL_FILE.test(f.name)));
    setWithLabels(null);
  };

  const onDrop = async (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const entries = [...e.dataTransfer.items].map((i) => i.webkitGetAsEntry?.()).filter((x): x is FileSystemEntry => !!x);
    if (entries.length > 0) add((await Promise.all(entries.map((en) => filesOf(en)))).flat());
    else add([...e.dataTransfer.files].map((file) => ({ file, name: file.name })));
  };

  const retryFailed = () => {
    itemsRef.current = itemsRef.current.map((i) => (i.state === 'failed' ? { ...i, state: 'queued' } : i));
    setItems(itemsRef.current);
    pump();
  };

  // Files that failed for want of a network go again by themselves once the browser is back online.
  useEffect(() => {
    window.addEventListener('online', retryFailed);
    return () => window.removeEventListener('online', retryFailed);
  });

  const count = (s: State) => items.filter((i) => i.state === s).length;

  return (
    <Layout
      title={
        <>
          Upload to <Link href={`/projects/${projectId}`}>{projectName ?? `project ${projectId}`}</Link>
        </>
      }
      actions={
        <>
          <Link href={`/projects/${projectId}`} className="button">
            Project
          </Link>
          <Link href={`/projects/${projectId}/annotate`} className="button primary">
            Annotate
          </Link>
        </>
      }
    >
      <div
        className={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => (e.preventDefault(), setDragging(true))}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => void onDrop(e)}
      >
        <p>Drop images or folders here</p>
        <label className="button">
          Choose files
          <input type="file" multiple accept="image/*" hidden onChange={(e) => add([...(e.target.files ?? [])].map((file) => ({ file, name: file.name })))} data-testid="file-input" />
        </label>{' '}
        <label className="button">
          Choose a folder
          <input
            type="file"
            multiple
            hidden
            ref={(el) => el?.setAttribute('webkitdirectory', '')}
            onChange={(e) => add([...(e.target.files ?? [])].map((file) => ({ file, name: file.webkitRelativePath || file.name })))}
            data-testid="folder-input"
          />
        </label>
      </div>
      {withLabels && (
        <LabelsFound
          key={withLabels.key}
          projectId={projectId}
          files={withLabels.files}
          labels={withLabels.labels}
          onImagesOnly={imagesOnly}
          onClose={() => setWithLabels(null)}
        />
      )}
      {items.length > 0 && (
        <div className="toolbar small" aria-live="polite">
          <span>{count('created')} uploaded</span>
          <span>{count('duplicate')} duplicates</span>
          <span>{count('rejected')} refused</span>
          <span>{count('failed')} failed</span>
          <span>{count('queued') + count('uploading')} pending</span>
          {count('failed') > 0 && <button onClick={retryFailed}>Retry failed</button>}
        </div>
      )}
      <table className="uploads">
        <tbody>
          {items.map((i) => (
            <tr key={i.key} className={i.state} data-state={i.state}>
              <td className="name">{i.name}</td>
              <td>
                <progress value={i.progress} max={1} />
              </td>
              <td className="state">{i.state}</td>
              <td className="muted small">{i.detail}</td>
              <td>{i.state === 'failed' && <button onClick={() => (update(i.key, { state: 'queued' }), pump())}>Retry</button>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <LabelledImport projectId={projectId} />
    </Layout>
  );
}
