import { useState } from 'react';
import { api } from '../api.js';
import type { ImageRecord } from '../types.js';
import { SPLIT_NAMES } from '../vocabulary.js';

/**
 * What the project grid does with the images picked in it: pick every loaded one or none, set their split, delete
 * them. Each action is offered only where the role may take it (`canWrite`, `canDelete`).
 */
export function GridBulkBar({ projectId, picked, loaded, onPick, onDone, onError, canWrite, canDelete }: {
  projectId: number;
  picked: ReadonlySet<number>;
  /** The images the grid has loaded so far. */
  loaded: () => readonly ImageRecord[];
  onPick(ids: Set<number>): void;
  onDone(): void;
  onError(message: string): void;
  canWrite: boolean;
  canDelete: boolean;
}) {
  const [busy, setBusy] = useState(false);
  const ids = [...picked];
  const act = async (work: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await work();
      onPick(new Set());
      onDone();
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const setSplit = (split: string) =>
    act(() => Promise.all(ids.map((id) => api.patch('/api/images/{image_id}', { path: { image_id: id }, body: { split: split === 'none' ? null : (split as (typeof SPLIT_NAMES)[number]) } }))));
  const remove = () => {
    if (!confirm(`Delete ${ids.length} image${ids.length === 1 ? '' : 's'} with their annotations?`)) return;
    void act(() => api.post('/api/images/bulk-delete', { body: { ids, project_id: projectId } }));
  };
  return (
    <div className="grid-select-bar" data-testid="grid-select-bar">
      <b>{picked.size} selected</b>
      <button className="ghost" onClick={() => onPick(new Set(loaded().map((i) => i.id)))}>Select all shown</button>
      <button className="ghost" disabled={picked.size === 0} onClick={() => onPick(new Set())}>Clear</button>
      {canWrite && (
        <select value="" disabled={busy || picked.size === 0} onChange={(e) => void setSplit(e.target.value)} aria-label="Set the split of the selected images">
          <option value="">Set split…</option>
          {[...SPLIT_NAMES, 'none'].map((s) => <option key={s} value={s}>{s === 'none' ? 'no split' : s}</option>)}
        </select>
      )}
      {canDelete && <button className="danger" disabled={busy || picked.size === 0} onClick={remove}>Delete selected</button>}
    </div>
  );
}
