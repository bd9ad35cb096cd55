import { useEffect, useState } from 'react';
import { api } from '../../api.js';
import type { QcSettings } from '../../types.js';

const OVERLAPS = [1, 2, 3, 4, 5];

/**
 * The project's quality control settings (PUT …/quality-control/settings): how many annotators label each image,
 * the share of hidden ground-truth tasks, the agreement threshold of the disagreement queue, and whether annotators
 * see their own scores and ground truth may train.
 */
export function QualitySettings({ projectId, settings, onSaved, onError }: { projectId: number; settings: QcSettings; onSaved: (s: QcSettings) => void; onError: (message: string) => void }) {
  const [draft, setDraft] = useState(settings);
  const [status, setStatus] = useState<string | null>(null);
  useEffect(() => setDraft(settings), [settings]);
  const set = <K extends keyof QcSettings>(key: K, value: QcSettings[K]) => (setDraft((d) => ({ ...d, [key]: value })), setStatus(null));
  const save = async () => {
    try {
      const saved = await api.put('/api/projects/{id}/quality-control/settings', { path: { id: projectId }, body: draft });
      onSaved(saved);
      setStatus('Settings saved');
    } catch (e) {
      onError((e as Error).message);
    }
  };
  return (
    <section className="card quality-settings" aria-label="Quality control settings">
      <h3>Settings</h3>
      <div className="inline-form">
        <SettingsFields draft={draft} set={set} />
        <button className="primary" onClick={save}>
          Save settings
        </button>
      </div>
      {status && (
        <p className="muted" role="status">
          {status}
        </p>
      )}
    </section>
  );
}

type Setter = <K extends keyof QcSettings>(key: K, value: QcSettings[K]) => void;

/** The settings as form controls: overlap 1–5, the ground-truth share, the threshold and the two switches. */
function SettingsFields({ draft, set }: { draft: QcSettings; set: Setter }) {
  return (
    <>
      <label>
        Annotators per image (overlap)
        <select aria-label="Overlap" value={draft.overlap} onChange={(e) => set('overlap', Number(e.target.value))}>
          {OVERLAPS.map((n) => (
            <option key={n} value={n}>
              {n === 1 ? '1 (no overlap)' : n}
            </option>
          ))}
        </select>
      </label>
      <label>
        Ground-truth share
        <input aria-label="Ground-truth share" type="number" min={0} max={0.5} step={0.05} value={draft.ground_truth_share} onChange={(e) => set('ground_truth_share', Number(e.target.value))} />
      </label>
      <label>
        Agreement threshold
        <input aria-label="Agreement threshold" type="number" min={0} max={1} step={0.05} value={draft.agreement_threshold} onChange={(e) => set('agreement_threshold', Number(e.target.value))} />
      </label>
      <label className="check">
        <input type="checkbox" checked={draft.annotators_see_scores} onChange={(e) => set('annotators_see_scores', e.target.checked)} /> Annotators see their own scores
      </label>
      <label className="check">
        <input type="checkbox" checked={draft.ground_truth_in_training} onChange={(e) => set('ground_truth_in_training', e.target.checked)} /> Ground-truth images may train
      </label>
    </>
  );
}
