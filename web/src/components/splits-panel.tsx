import { useEffect, useState } from 'react';
import { api, isMissingRoute } from '../api.js';
import type { QueryOf, ResponseOf } from '../types.js';
import { ErrorBanner } from './layout.js';
import { SPLIT_NAMES } from '../vocabulary.js';

type CurrentSplits = ResponseOf<'/api/projects/{id}/splits', 'get'>;
type SplitResult = ResponseOf<'/api/projects/{id}/splits', 'post'>;
type Strategy = NonNullable<QueryOf<'/api/projects/{id}/splits', 'post'>['strategy']>;

const STRATEGIES: [Strategy, string][] = [
  ['random', 'Random'],
  ['stratified', 'Stratified (keep class proportions)'],
  ['grouped', 'Grouped (near-duplicates together)'],
];

/** Assigns train/valid/test to every image by a strategy and shows the counts per split (and per class). */
export function SplitsPanel({ projectId, onChange }: { projectId: number; onChange: () => void }) {
  const [current, setCurrent] = useState<CurrentSplits | null>(null);
  const [missing, setMissing] = useState(false);
  const [percent, setPercent] = useState({ train: 70, valid: 20, test: 10 });
  const [strategy, setStrategy] = useState<Strategy>('random');
  const [seed, setSeed] = useState('');
  const [result, setResult] = useState<SplitResult | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = () =>
    api.get('/api/projects/{id}/splits', { path: { id: projectId } }).then(setCurrent, (e) => (isMissingRoute(e) ? setMissing(true) : setError((e as Error).message)));
  useEffect(() => void load(), [projectId]);

  const sum = percent.train + percent.valid + percent.test;
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const query = { ...percent, strategy, seed: seed === '' ? undefined : Number(seed) };
      const res = await api.post('/api/projects/{id}/splits', { path: { id: projectId }, query });
      // The counts are read again before the result shows, so the two never disagree on screen.
      await load();
      setResult(res);
      setSeed(String(res.seed));
      onChange();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  if (missing) return <p className="muted">Splits are not available on this server yet.</p>;
  return (
    <section className="card" aria-label="Splits">
      <h3>Splits</h3>
      {current && (
        <p data-testid="split-counts">
          <b>{current.counts.train}</b> train · <b>{current.counts.valid}</b> valid · <b>{current.counts.test}</b> test · <b>{current.unassigned}</b> unassigned
          <span className="muted"> of {current.total}</span>
        </p>
      )}
      <form className="inline-form" onSubmit={(e) => (e.preventDefault(), void run())}>
        <label className="small">
          Strategy
          <select value={strategy} onChange={(e) => setStrategy(e.target.value as Strategy)} aria-label="Split strategy">
            {STRATEGIES.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {SPLIT_NAMES.map((k) => (
          <label key={k} className="small">
            {k} %
            <input type="number" min={0} max={100} className="narrow" aria-label={`${k} percent`} value={percent[k]} onChange={(e) => setPercent({ ...percent, [k]: Number(e.target.value) })} />
          </label>
        ))}
        <label className="small">
          Seed
          <input type="number" min={0} className="narrow" placeholder="random" aria-label="Split seed" value={seed} onChange={(e) => setSeed(e.target.value)} />
        </label>
        <button type="submit" disabled={busy || sum !== 100}>
          Split images
        </button>
      </form>
      {sum !== 100 && <p className="small status failed">Percentages add up to {sum}, not 100.</p>}
      <p className="muted small">This reassigns every image of the project. The same seed on the same images gives the same split.</p>
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {result && (
        <div data-testid="split-result" className="small">
          <p>
            {result.strategy} split with seed {result.seed}: {result.counts.train} / {result.counts.valid} / {result.counts.test}
            {result.groups !== undefined && ` · ${result.groups} near-duplicate group${result.groups === 1 ? '' : 's'} kept together`}
          </p>
          {result.per_class && (
            <table className="list">
              <thead>
                <tr>
                  <th>Class</th>
                  <th>Train</th>
                  <th>Valid</th>
                  <th>Test</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(result.per_class).map(([name, c]) => (
                  <tr key={name}>
                    <td>{name}</td>
                    <td>{c.train}</td>
                    <td>{c.valid}</td>
                    <td>{c.test}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </section>
  );
}
