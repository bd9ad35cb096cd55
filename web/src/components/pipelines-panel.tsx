import { useEffect, useMemo, useRef, useState } from 'react';
import { parse as parseYaml } from 'yaml';
import { api, ApiError } from '../api.js';
import { ProgressBar } from '../jobs.js';
import type { ResponseOf } from '../types.js';
import { ErrorBanner } from './layout.js';
import { PipelineEditor, type EditorProblem } from './pipeline-editor.js';
import { pipelineStarts, type PipelineStart } from './pipeline-examples.js';

type Pipeline = ResponseOf<'/api/pipelines', 'get'>[number];
type Step = Pipeline['definition']['steps'][number];
type Run = ResponseOf<'/api/pipelines/{id}/runs', 'get'>[number];

const active = (r: Run) => r.status === 'queued' || r.status === 'running';

/** YAML syntax errors arrive as a 422 whose issues carry line and column; show them in the editor too. */
function syntaxProblems(err: unknown): EditorProblem[] {
  if (err instanceof ApiError && err.status === 422) {
    const detail = (err.body as { detail?: unknown }).detail;
    if (Array.isArray(detail)) return detail.map((d: { msg: string; path?: string; line?: number; column?: number }) => ({ path: d.path ?? '', message: d.msg, line: d.line, column: d.column }));
  }
  return [{ path: '', message: err instanceof Error ? err.message : String(err) }];
}

/** The Pipelines tab: the project's pipelines, a YAML editor with validation at the lines, the step graph, runs. */
export function PipelinesPanel({ projectId }: { projectId: number }) {
  const [pipelines, setPipelines] = useState<Pipeline[] | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = (select?: number) =>
    api.get('/api/pipelines', { query: { project_id: projectId } }).then((list) => {
      setPipelines(list);
      setSelected((current) => select ?? current ?? list[0]?.id ?? null);
    }, (e) => setError((e as Error).message));
  useEffect(() => void load(), [projectId]);

  const [starts, setStarts] = useState<PipelineStart[] | null>(null);
  const [choosing, setChoosing] = useState(false);
  const choose = () => {
    setChoosing((open) => !open);
    if (starts === null) pipelineStarts(projectId).then(setStarts, (e) => setError((e as Error).message));
  };
  const create = async (start: PipelineStart) => {
    try {
      const created = await api.post('/api/pipelines', { body: { project_id: projectId, definition: start.definition } });
      setChoosing(false);
      await load(created.id);
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const pipeline = pipelines?.find((p) => p.id === selected) ?? null;
  return (
    <section aria-label="Pipelines" className="stack">
      <ErrorBanner message={error} onClose={() => setError(null)} />
      <div className="card">
        <div className="toolbar">
          <h3>Pipelines</h3>
          <button onClick={choose} aria-expanded={choosing}>New pipeline</button>
        </div>
        {choosing && <StartChooser starts={starts} onCreate={(start) => void create(start)} />}
        {pipelines === null ? (
          <p className="muted small">Loading…</p>
        ) : pipelines.length === 0 ? (
          <p className="muted small">No pipelines yet.</p>
        ) : (
          <table className="list" data-testid="pipelines">
            <thead>
              <tr><th>Name</th><th>Steps</th><th>Writes data</th><th /></tr>
            </thead>
            <tbody>
              {pipelines.map((p) => (
                <tr key={p.id} className={p.id === selected ? 'selected' : ''}>
                  <td>{p.name}</td>
                  <td>{p.definition.steps.length}</td>
                  <td>{p.writes_data ? 'yes' : 'no'}</td>
                  <td><button className="ghost" onClick={() => setSelected(p.id)}>Open</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      {pipeline && <PipelineDetail key={pipeline.id} projectId={projectId} pipeline={pipeline} onSaved={() => void load(pipeline.id)} onError={setError} />}
    </section>
  );
}

/** The "New pipeline" menu: a blank definition and the examples; one that does not validate on this project says why. */
function StartChooser({ starts, onCreate }: { starts: PipelineStart[] | null; onCreate: (start: PipelineStart) => void }) {
  if (starts === null) return <p className="muted small">Checking the examples against this project…</p>;
  return (
    <ul className="pipeline-starts" data-testid="pipeline-starts">
      {starts.map((start) => (
        <li key={start.key} data-start={start.key}>
          <button disabled={start.problem !== null} onClick={() => onCreate(start)}>{start.title}</button>
          {start.definition.description && <span className="muted small"> {start.definition.description}</span>}
          {start.problem && <span className="error small"> Not for this project: {start.problem}</span>}
        </li>
      ))}
    </ul>
  );
}

/** The steps of the editor's text as it stands (the last text that parsed, while a line is half typed). */
function useLiveSteps(text: string | null, saved: Step[]): Step[] {
  const last = useRef<Step[]>(saved);
  return useMemo(() => {
    if (text === null) return last.current;
    try {
      const steps = (parseYaml(text) as { steps?: unknown } | null)?.steps;
      if (Array.isArray(steps) && steps.every((s) => s && typeof s === 'object' && typeof (s as Step).id === 'string')) {
        last.current = (steps as Step[]).map((s) => ({ ...s, type: String(s.type ?? ''), needs: Array.isArray(s.needs) ? s.needs.filter((n) => typeof n === 'string') : undefined }));
      }
    } catch {
      // Half-typed YAML: keep the last graph that parsed.
    }
    return last.current;
  }, [text]);
}

function PipelineDetail({ projectId, pipeline, onSaved, onError }: { projectId: number; pipeline: Pipeline; onSaved: () => void; onError: (m: string) => void }) {
  const [text, setText] = useState<string | null>(null);
  const [problems, setProblems] = useState<EditorProblem[]>([]);
  const [saving, setSaving] = useState(false);
  const [runs, setRuns] = useState<Run[]>([]);
  const [openRun, setOpenRun] = useState<number | null>(null);
  const liveSteps = useLiveSteps(text, pipeline.definition.steps);

  useEffect(() => {
    api.getText('/api/pipelines/{id}/yaml', { path: { id: pipeline.id } }).then(setText, (e) => onError((e as Error).message));
  }, [pipeline.id]);

  const loadRuns = () => api.get('/api/pipelines/{id}/runs', { path: { id: pipeline.id }, query: { limit: 20 } }).then(setRuns, (e) => onError((e as Error).message));
  useEffect(() => void loadRuns(), [pipeline.id]);
  // Follow the runs that are still going.
  useEffect(() => {
    if (!runs.some(active)) return;
    const timer = setTimeout(() => void loadRuns(), 1000);
    return () => clearTimeout(timer);
  }, [runs]);

  const check = async (yamlText: string): Promise<EditorProblem[]> => {
    let found: EditorProblem[];
    try {
      found = (await api.postText('/api/pipelines/validate-yaml', yamlText, { query: { project_id: projectId } })).errors;
    } catch (e) {
      found = syntaxProblems(e);
    }
    setProblems(found);
    return found;
  };

  const save = async () => {
    if (text === null) return;
    setSaving(true);
    try {
      await api.put('/api/pipelines/{id}', { path: { id: pipeline.id }, body: { yaml: text } });
      onSaved();
    } catch (e) {
      setProblems(syntaxProblems(e));
      onError((e as Error).message);
    } finally {
      setSaving(false);
    }
  };

  const run = async () => {
    try {
      const started = await api.post('/api/pipelines/{id}/run', { path: { id: pipeline.id } });
      setOpenRun(started.id);
      await loadRuns();
    } catch (e) {
      onError((e as Error).message);
    }
  };

  const cancel = async (id: number) => {
    try {
      await api.post('/api/pipeline-runs/{id}/cancel', { path: { id } });
      await loadRuns();
    } catch (e) {
      onError((e as Error).message);
    }
  };

  return (
    <>
      <div className="card stack">
        <div className="toolbar">
          <h3>{pipeline.name}</h3>
          <button onClick={() => void save()} disabled={saving || text === null}>Save</button>
          <button className="primary" onClick={() => void run()}>Run</button>
        </div>
        {text !== null && <PipelineEditor value={text} onChange={setText} check={check} />}
        <div data-testid="pipeline-problems">
          {problems.length === 0 ? (
            <p className="muted small">No problems found.</p>
          ) : (
            <ul className="problems">
              {problems.map((p, i) => (
                <li key={i} className="error small">
                  {p.line !== undefined && <b>line {p.line}: </b>}
                  {p.path && <code>{p.path}</code>} {p.message}
                </li>
              ))}
            </ul>
          )}
        </div>
        <StepGraph steps={liveSteps} />
      </div>
      <div className="card">
        <h3>Runs</h3>
        {runs.length === 0 ? (
          <p className="muted small">No runs yet.</p>
        ) : (
          <table className="list" data-testid="pipeline-runs">
            <thead>
              <tr><th>#</th><th>Status</th><th>Progress</th><th>Started</th><th /></tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.id}>
                  <td>{r.id}</td>
                  <td className={`status ${r.status}`}>
                    {r.status}{r.error ? `: ${r.error}` : ''}
                    {r.status === 'queued' && r.waiting_for && <div className="muted small" data-testid="run-waiting">{r.waiting_for}</div>}
                  </td>
                  <td>
                    <ProgressBar value={r.progress} label={`Run ${r.id}`} />
                    {active(r) && r.eta_seconds !== null && <span className="muted small"> about {Math.ceil(r.eta_seconds)} s left</span>}
                  </td>
                  <td className="small">{new Date(r.created_at).toLocaleString()}</td>
                  <td>
                    <button className="ghost" onClick={() => setOpenRun(openRun === r.id ? null : r.id)}>{openRun === r.id ? 'Hide' : 'Steps'}</button>
                    {active(r) && <button className="ghost" onClick={() => void cancel(r.id)}>Cancel</button>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {runs.filter((r) => r.id === openRun).map((r) => <RunSteps key={r.id} run={r} />)}
      </div>
    </>
  );
}

function RunSteps({ run }: { run: Run }) {
  return (
    <div data-testid="run-steps" className="stack">
      <h4>Run {run.id}: steps</h4>
      <table className="list">
        <thead>
          <tr><th>Step</th><th>Type</th><th>Status</th><th>Time</th><th>Outputs</th></tr>
        </thead>
        <tbody>
          {run.steps.map((s) => (
            <tr key={s.id} data-step={s.id}>
              <td>{s.id}</td>
              <td>{s.type}</td>
              <td className={`status ${s.status}`}>{s.status}{s.error ? `: ${s.error}` : ''}</td>
              <td className="small">{s.duration_ms !== null ? `${s.duration_ms} ms` : ''}</td>
              <td><pre className="small outputs">{JSON.stringify(s.outputs, null, 1)}</pre></td>
            </tr>
          ))}
        </tbody>
      </table>
      {Object.keys(run.writes).length > 0 && (
        <p className="small">Written by this run: {Object.entries(run.writes).map(([k, n]) => `${n} ${k}${n === 1 ? '' : 's'}`).join(', ')}</p>
      )}
    </div>
  );
}

const NODE_W = 150;
const NODE_H = 44;
const GAP_X = 50;
const GAP_Y = 16;

/** A read-only drawing of the DAG: a column per depth (longest chain of `needs`), arrows from each need. */
function StepGraph({ steps }: { steps: Step[] }) {
  const depth = new Map<string, number>();
  const byId = new Map(steps.map((s) => [s.id, s]));
  const depthOf = (id: string, seen = new Set<string>()): number => {
    if (depth.has(id)) return depth.get(id)!;
    if (seen.has(id)) return 0;
    seen.add(id);
    const needs = byId.get(id)?.needs ?? [];
    const d = needs.length === 0 ? 0 : 1 + Math.max(...needs.map((n) => (byId.has(n) ? depthOf(n, seen) : 0)));
    depth.set(id, d);
    return d;
  };
  steps.forEach((s) => depthOf(s.id));
  const rows = new Map<number, number>();
  const position = new Map<string, { x: number; y: number }>();
  for (const s of steps) {
    const d = depth.get(s.id)!;
    const row = rows.get(d) ?? 0;
    rows.set(d, row + 1);
    position.set(s.id, { x: 10 + d * (NODE_W + GAP_X), y: 10 + row * (NODE_H + GAP_Y) });
  }
  const width = 20 + (Math.max(0, ...depth.values()) + 1) * (NODE_W + GAP_X);
  const height = 20 + Math.max(1, ...rows.values()) * (NODE_H + GAP_Y);
  return (
    <svg className="step-graph" data-testid="step-graph" width={width} height={height} role="img" aria-label="Pipeline steps">
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto">
          <path d="M0,0 L10,5 L0,10 z" fill="currentColor" />
        </marker>
      </defs>
      {steps.flatMap((s) =>
        (s.needs ?? []).filter((n) => position.has(n)).map((n) => {
          const a = position.get(n)!;
          const b = position.get(s.id)!;
          return <line key={`${n}->${s.id}`} x1={a.x + NODE_W} y1={a.y + NODE_H / 2} x2={b.x} y2={b.y + NODE_H / 2} stroke="currentColor" markerEnd="url(#arrow)" />;
        }),
      )}
      {steps.map((s) => {
        const p = position.get(s.id)!;
        return (
          <g key={s.id} data-node={s.id} transform={`translate(${p.x},${p.y})`}>
            <rect width={NODE_W} height={NODE_H} rx={6} fill="var(--card)" stroke="var(--accent)" />
            <text x={8} y={18} fontWeight={600}>{s.id}</text>
            <text x={8} y={34} fontSize={11} fill="var(--muted)">{s.type}</text>
          </g>
        );
      })}
    </svg>
  );
}
