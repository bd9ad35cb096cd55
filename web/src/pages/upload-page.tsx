import { useEffect, useRef, useState, type DragEvent } from 'react';
import { ApiError, upload } from '../api.js';
import { Layout } from '../components/layout.js';
import { Link } from '../router.js';
import type { UploadResponse } from '../types.js';

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
async function filesOf(entry: FileSystemEntry, prefix = ''): Promise<{ file: File; name: string }[]> {
  if (entry.isFile) {
    const file = await new Promise<File>((res, rej) => (entry as FileSystemFileEntry).file(res, rej));
    return [{ file, name: prefix + file.name }];
  }
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  const out: { file: File; name: string }[] = [];
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej));
    if (batch.length === 0) return out;
    for (const child of batch) out.push(...(await filesOf(child, `${prefix}${entry.name}/`)));
  }
}

export function UploadPage({ projectId }: { projectId: number }) {
  const [items, setItems] = useState<Item[]>([]);
  const [dragging, setDragging] = useState(false);
  const itemsRef = useRef<Item[]>([]);
  const active = useRef(0);
  const nextKey = useRef(1);

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
      upload<UploadResponse>(`/api/projects/${projectId}/images`, form, (p) => update(item.key, { progress: p.total ? p.loaded / p.total : 0 }))
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

  const add = (files: { file: File; name: string }[]) => {
    const fresh = files.map(({ file, name }) => ({ key: nextKey.current++, file, name, state: 'queued' as State, progress: 0 }));
    itemsRef.current = itemsRef.current.concat(fresh);
    setItems(itemsRef.current);
    pump();
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
      title="Upload"
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
          />
        </label>
      </div>
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
    </Layout>
  );
}
