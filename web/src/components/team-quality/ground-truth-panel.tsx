import { useEffect, useState } from 'react';
import { api } from '../../api.js';
import type { ImageRecord, QcGroundTruth } from '../../types.js';

/**
 * Ground truth: the images whose reviewed labels are the reference (…/quality-control/ground-truth), and the approved
 * images that could become one. Marking freezes an image's accepted labels; removing stops scoring against it.
 */
export function GroundTruthPanel({ projectId, onChange, onError }: { projectId: number; onChange: () => void; onError: (message: string) => void }) {
  const [marked, setMarked] = useState<QcGroundTruth[]>([]);
  const [approved, setApproved] = useState<ImageRecord[]>([]);
  const [chosen, setChosen] = useState<Set<number>>(new Set());
  const load = () => {
    api.get('/api/projects/{id}/quality-control/ground-truth', { path: { id: projectId } }).then(setMarked, (e) => onError((e as Error).message));
    api.get('/api/projects/{id}/images', { path: { id: projectId }, query: { review_state: 'approved', limit: 1000 } }).then(setApproved, (e) => onError((e as Error).message));
  };
  useEffect(load, [projectId]);
  const run = async (action: () => Promise<unknown>) => {
    try {
      await action();
      setChosen(new Set());
      load();
      onChange();
    } catch (e) {
      onError((e as Error).message);
    }
  };
  const mark = () => run(() => api.post('/api/projects/{id}/quality-control/ground-truth', { path: { id: projectId }, body: { image_ids: [...chosen] } }));
  const unmark = (imageId: number) => run(() => api.delete('/api/projects/{id}/quality-control/ground-truth/{image_id}', { path: { id: projectId, image_id: imageId } }));
  const isMarked = new Set(marked.map((g) => g.image_id));
  const candidates = approved.filter((i) => !isMarked.has(i.id));
  const toggle = (id: number, on: boolean) => setChosen((s) => (on ? new Set([...s, id]) : new Set([...s].filter((x) => x !== id))));
  return (
    <section className="card" aria-label="Ground truth">
      <h3>Ground truth ({marked.length} images)</h3>
      <ul className="gt-list" data-testid="ground-truth-list">
        {marked.map((g) => (
          <li key={g.image_id} data-image={g.image_id}>
            <img src={`/api/images/${g.image_id}/thumbnail`} alt="" /> Image {g.image_id} · {g.shapes.length} shapes
            <button className="ghost" onClick={() => unmark(g.image_id)} aria-label={`Stop using image ${g.image_id} as ground truth`}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <Candidates images={candidates} chosen={chosen} onToggle={toggle} />
      <button className="primary" disabled={chosen.size === 0} onClick={mark}>
        Mark {chosen.size || ''} as ground truth
      </button>
    </section>
  );
}

/** The approved images not yet ground truth, each with a box to tick. */
function Candidates({ images, chosen, onToggle }: { images: ImageRecord[]; chosen: Set<number>; onToggle: (id: number, on: boolean) => void }) {
  return (
    <>
      <h4>Approved images that could be ground truth</h4>
      {images.length === 0 && <p className="muted">No other approved image: approve an image in review to offer it as ground truth.</p>}
      <ul className="gt-list" data-testid="ground-truth-candidates">
        {images.map((i) => (
          <li key={i.id} data-image={i.id}>
            <label className="check">
              <input type="checkbox" checked={chosen.has(i.id)} onChange={(e) => onToggle(i.id, e.target.checked)} aria-label={`Image ${i.id} (${i.original_name})`} />
              <img src={`/api/images/${i.id}/thumbnail`} alt="" /> {i.original_name} · {i.annotation_count} annotations
            </label>
          </li>
        ))}
      </ul>
    </>
  );
}
