import { useEffect, useRef, useState } from 'react';
import { api, upload } from '../api.js';
import { ProgressBar, useJob, type Job } from '../jobs.js';
import { isDetector, type Model } from '../models.js';
import type { ResponseOf } from '../types.js';
import { ErrorBanner } from './layout.js';

const TASKS = ['detect', 'segment', 'classify', 'sam-encoder', 'sam-decoder'];
const LIFECYCLES: Model['lifecycle'][] = ['development', 'staging', 'production', 'archived'];

/** What a detector run over the project answers: its result, or (202) the job that will produce it. */
type YoloAnswer = ResponseOf<'/api/projects/{id}/auto-annotate/yolo', 'post'>;
type YoloResult = Exclude<YoloAnswer, { job_id: number }>;

/** The project's model registry (upload .onnx, lifecycle, delete) and "auto-annotate all / unannotated". */
export function ModelsPanel({ projectId, onAnnotated }: { projectId: number; onAnnotated: () => void }) {
  const [models, setModels] = useState<Model[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () => api.get('/api/projects/{id}/models', { path: { id: projectId } }).then(setModels, (e) => setError((e as Error).message));
  useEffect(() => void load(), [projectId]);

  const setLifecycle = async (m: Model, lifecycle: Model['lifecycle']) => {
    setError(null);
    try {
      await api.patch('/api/models/{model_id}/lifecycle', { path: { model_id: m.id }, body: { lifecycle } });
    } catch (e) {
      setError((e as Error).message);
    }
    await load();
  };
  const remove = async (m: Model) => {
    if (!confirm(`Delete the model “${m.name}”?`)) return;
    setError(null);
    try {
      await api.delete('/api/models/{model_id}', { path: { model_id: m.id } });
    } catch (e) {
      setError((e as Error).message);
    }
    await load();
  };

  return (
    <section className="stack" aria-label="Models">
      <ErrorBanner message={error} onClose={() => setError(null)} />
      <div className="card">
        <h3>Models</h3>
        {models === null ? (
          <p className="muted small">Loading…</p>
        ) : models.length === 0 ? (
          <p className="muted small">No models yet. Upload an ONNX export (e.g. `yolo export format=onnx`).</p>
        ) : (
          <table className="list" data-testid="models">
            <thead>
              <tr>
                <th>Name</th>
                <th>Task</th>
                <th>Classes</th>
                <th>Input</th>
                <th>Size</th>
                <th>Lifecycle</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {models.map((m) => (
                <tr key={m.id} data-model={m.name}>
                  <td>
                    {m.name} <span className="muted small">{m.format}</span>
                  </td>
                  <td>{m.task}</td>
                  <td className="small" title={m.class_names.join(', ')}>
                    {m.class_names.length ? `${m.class_names.slice(0, 4).join(', ')}${m.class_names.length > 4 ? ` +${m.class_names.length - 4}` : ''}` : '—'}
                  </td>
                  <td className="small">{m.input_size ? `${m.input_size.width}×${m.input_size.height}` : '—'}</td>
                  <td className="small">{m.size_bytes < 1024 * 1024 ? `${Math.ceil(m.size_bytes / 1024)} KiB` : `${(m.size_bytes / 1024 / 1024).toFixed(1)} MiB`}</td>
                  <td>
                    <select value={m.lifecycle} onChange={(e) => void setLifecycle(m, e.target.value as typeof m.lifecycle)} aria-label={`Lifecycle of ${m.name}`}>
                      {LIFECYCLES.map((l) => (
                        <option key={l} value={l}>
                          {l}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>
                    <button className="ghost small" onClick={() => void remove(m)} aria-label={`Delete model ${m.name}`}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <p className="muted small">One production model per task: promoting one archives the previous.</p>
        <UploadModel projectId={projectId} onUploaded={() => void load()} onError={setError} />
      </div>
      <AutoAnnotate projectId={projectId} models={(models ?? []).filter(isDetector)} onDone={onAnnotated} />
    </section>
  );
}

function UploadModel({ projectId, onUploaded, onError }: { projectId: number; onUploaded: () => void; onError: (m: string) => void }) {
  const file = useRef<HTMLInputElement>(null);
  const [name, setName] = useState('');
  const [task, setTask] = useState('');
  const [classNames, setClassNames] = useState('');
  const [progress, setProgress] = useState<number | null>(null);

  const send = async () => {
    const f = file.current?.files?.[0];
    if (!f) return onError('Choose a model file first');
    const form = new FormData();
    // Fields first: the server reads the parts as a stream, and the file is the last.
    if (name.trim()) form.append('name', name.trim());
    if (task) form.append('task', task);
    if (classNames.trim()) form.append('class_names', classNames.trim());
    form.append('file', f, f.name);
    setProgress(0);
    try {
      await upload('/api/projects/{id}/models/upload', { path: { id: projectId } }, form, (p) => setProgress(p.total ? p.loaded / p.total : 0)).promise;
      setName('');
      setClassNames('');
      if (file.current) file.current.value = '';
      onUploaded();
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setProgress(null);
    }
  };

  return (
    <form className="inline-form" aria-label="Upload model" onSubmit={(e) => (e.preventDefault(), void send())}>
      <input type="file" ref={file} accept=".onnx,.pt,.pth,.engine,.tflite" aria-label="Model file" data-testid="model-file" />
      <input placeholder="Name (file name)" value={name} onChange={(e) => setName(e.target.value)} aria-label="Model name" />
      <select value={task} onChange={(e) => setTask(e.target.value)} aria-label="Model task">
        <option value="">Task from the file</option>
        {TASKS.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
      <input placeholder="Class names (if not in the file)" value={classNames} onChange={(e) => setClassNames(e.target.value)} aria-label="Class names" />
      <button type="submit" disabled={progress !== null}>
        Upload model
      </button>
      {progress !== null && <ProgressBar value={progress} label="Model upload" />}
    </form>
  );
}

function AutoAnnotate({ projectId, models, onDone }: { projectId: number; models: Model[]; onDone: () => void }) {
  const [model, setModel] = useState('');
  // null (the field empty): the model's own cut-off, per class where promotion stored thresholds.
  const [confidence, setConfidence] = useState<number | null>(null);
  const [iou, setIou] = useState(0.45);
  const [onlyUnannotated, setOnlyUnannotated] = useState(true);
  const [jobId, setJobId] = useState<number | null>(null);
  const [imageCount, setImageCount] = useState(0);
  const [result, setResult] = useState<YoloResult | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const finished = (job: Job) => {
    if (job.status === 'failed') setError(job.error ?? 'The auto-annotate job failed');
    else setResult(job.result as YoloResult);
    setBusy(false);
    onDone();
  };
  const { job } = useJob(jobId, finished);
  const chosen = model || String(models[0]?.id ?? '');

  const run = async () => {
    setError(null);
    setResult(null);
    setJobId(null);
    setBusy(true);
    try {
      const answer = await api.post('/api/projects/{id}/auto-annotate/yolo', {
        path: { id: projectId },
        body: { model: Number(chosen), ...(confidence === null ? {} : { confidence }), iou, only_unannotated: onlyUnannotated, create_missing_classes: true },
      });
      if ('job_id' in answer) {
        setImageCount(answer.image_count);
        setJobId(answer.job_id);
        return;
      }
      setResult(answer);
      setBusy(false);
      onDone();
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };

  return (
    <div className="card" aria-label="Auto-annotate">
      <h3>Auto-annotate</h3>
      {models.length === 0 ? (
        <p className="muted small">Upload a detect or segment ONNX model to label images automatically.</p>
      ) : (
        <form className="inline-form" onSubmit={(e) => (e.preventDefault(), void run())}>
          <label className="small">
            Model
            <select value={chosen} onChange={(e) => setModel(e.target.value)} aria-label="Detector model">
              {models.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.name} ({m.task}, {m.lifecycle})
                </option>
              ))}
            </select>
          </label>
          <label className="small">
            Confidence
            <input
              type="number"
              className="narrow"
              min={0}
              max={1}
              step={0.05}
              value={confidence ?? ''}
              placeholder={models.find((m) => String(m.id) === chosen)?.class_thresholds ? 'per class' : '0.25'}
              onChange={(e) => setConfidence(e.target.value === '' ? null : Number(e.target.value))}
              aria-label="Confidence"
            />
          </label>
          <label className="small">
            IoU
            <input type="number" className="narrow" min={0} max={1} step={0.05} value={iou} onChange={(e) => setIou(Number(e.target.value))} aria-label="IoU" />
          </label>
          <label className="small">
            Images
            <select value={onlyUnannotated ? 'unannotated' : 'all'} onChange={(e) => setOnlyUnannotated(e.target.value === 'unannotated')} aria-label="Which images">
              <option value="unannotated">Unannotated only</option>
              <option value="all">All images</option>
            </select>
          </label>
          <button type="submit" className="primary" disabled={busy}>
            Auto-annotate
          </button>
        </form>
      )}
      {jobId !== null && busy && (
        <div className="small">
          Running on {imageCount} images… <ProgressBar value={job?.progress ?? 0} label="Auto-annotate progress" />
        </div>
      )}
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {result && (
        <p className="small" data-testid="auto-annotate-result">
          Created {result.created} annotation{result.created === 1 ? '' : 's'}
          {result.skipped > 0 && `, skipped ${result.skipped}`}
          {(result.classes_created?.length ?? 0) > 0 && ` · new classes: ${result.classes_created.join(", ")}`}
        </p>
      )}
    </div>
  );
}
