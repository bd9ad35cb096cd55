import { useEffect, useMemo, useRef, useState } from 'react';
import { api, ApiError } from '../../api.js';
import { ErrorBanner, Layout } from '../layout.js';
import { accessOf } from '../project-access.js';
import { Link } from '../../router.js';
import type { LabelClass, ResponseOf, Sample, SamplePatch } from '../../types.js';
import { SampleAudio } from './sample-audio.js';
import { SampleText } from './sample-text.js';
import { SampleVideo } from './sample-video.js';

type Task = ResponseOf<'/api/projects/{id}/quality-control/samples/tasks/{sample_id}', 'get'>;
const nextPath = '/api/projects/{id}/quality-control/samples/tasks/next';

/**
 * Below project admin, a project with quality control (overlap or hidden ground truth) deals sample tasks (issue 29):
 * `{ task }` (null when none is left) to work on them; `false` to label the project's samples as usual (the caller
 * administers the project, or it deals none: 409); `undefined` while deciding.
 */
export function useSampleTasks(projectId: number): { task: Task | null } | false | undefined {
  const [mode, setMode] = useState<{ task: Task | null } | false>();
  useEffect(() => {
    void (async () => {
      const mine = await accessOf(projectId).catch(() => null);
      const annotates = mine?.permissions.includes('annotations.write') && !mine.permissions.includes('project.update');
      if (!annotates) return setMode(false);
      try {
        setMode(await api.post(nextPath, { path: { id: projectId } }));
      } catch (e) {
        // 409: quality control is off. Anything else: the usual page, whose own calls report the trouble.
        if (!(e instanceof ApiError && e.status === 409)) console.warn('samples/tasks/next', e);
        setMode(false);
      }
    })();
  }, [projectId]);
  return mode;
}


/**
 * The caller's dealt sample, shown with their own answer (the task's class and spans, never the sample's), saved
 * with PUT on the task; Submit task submits it and opens the next. Text, audio and video samples; a task on another
 * modality is shown as not labelable here. Nothing tells ground-truth samples apart.
 */
export function SampleTasks({ projectId, first }: { projectId: number; first: Task | null }) {
  const [task, setTask] = useState(first);
  const [classes, setClasses] = useState<LabelClass[]>([]);
  const [error, onError] = useState<string | null>(null);
  const [sample, setSample] = useState<Sample | null>(null);
  const [status, setStatus] = useState('');
  const [submitting, setSubmitting] = useState(false);
  const saving = useRef<Promise<unknown>>(Promise.resolve());
  const path = (sampleId: number) => ({ id: projectId, sample_id: sampleId });

  useEffect(() => void api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then(setClasses, (e) => onError((e as Error).message)), [projectId]);
  useEffect(() => {
    setSample(null);
    if (task) api.get('/api/samples/{sample_id}', { path: { sample_id: task.sample_id } }).then(setSample, (e) => onError((e as Error).message));
  }, [task?.sample_id]);

  /** Saves the class and spans, one PUT after another: a later edit is never overtaken by an earlier one. */
  const save = (patch: SamplePatch) => {
    if (!task) return;
    if (Array.isArray(patch.label) || patch.value !== undefined) return onError('A quality-control task keeps one class and spans only.');
    const body = { ...('label' in patch && { label: patch.label as string | null }), ...('spans' in patch && { spans: patch.spans }) };
    setTask({ ...task, ...body } as Task);
    setStatus('Saving…');
    const mine = saving.current.then(() => api.put('/api/projects/{id}/quality-control/samples/tasks/{sample_id}', { path: path(task.sample_id), body }).then(
      (saved) => {
        if (saving.current !== mine) return;
        setTask(saved);
        setStatus('Saved');
      },
      (e) => {
        setStatus('');
        onError((e as Error).message);
      },
    ));
    saving.current = mine;
  };

  const submit = async () => {
    if (!task) return;
    setSubmitting(true);
    try {
      await saving.current;
      await api.post('/api/projects/{id}/quality-control/samples/tasks/{sample_id}/submit', { path: path(task.sample_id) });
      setTask((await api.post(nextPath, { path: { id: projectId } })).task);
      setStatus('');
    } catch (e) {
      onError(`Submit: ${(e as Error).message}`);
    } finally {
      setSubmitting(false);
    }
  };

  const shown = useMemo(() => sample && task && ({ ...sample, label: task.label, spans: task.spans } as Sample), [sample, task]);
  const own = classes.filter((c) => !shown || !c.modalities || c.modalities.includes(shown.modality));
  const view = shown && { sample: shown, classes: own, readOnly: task?.status !== 'open', save };
  return (
    <Layout title="Samples · quality-control task" actions={<Link href={`/projects/${projectId}`} className="button">Back to project</Link>}>
      <ErrorBanner message={error} onClose={() => onError(null)} />
      {task ? <>
      <section className="stats" aria-label="Progress">
        <div data-testid="sample-task">Quality-control task</div>
        <div className="muted" role="status">{status}</div>
      </section>
      {own.length > 0 && <p className="muted">Keys: {own.slice(0, 9).map((c, i) => `${i + 1} ${c.name}`).join(' · ')}</p>}
      {view && view.sample.modality === 'text' && <SampleText key={view.sample.id} {...view} />}
      {view && view.sample.modality === 'audio' && <SampleAudio key={view.sample.id} {...view} />}
      {view && view.sample.modality === 'video' && <SampleVideo key={view.sample.id} {...view} />}
      {view && !['text', 'audio', 'video'].includes(view.sample.modality) && <p className="muted">A {view.sample.modality} sample is not labelled on this page yet.</p>}
      <div className="toolbar">
        <button className="primary" onClick={() => void submit()} disabled={submitting || !sample} data-testid="submit-sample-task" title="Submit your answer on this sample and open your next task">
          {submitting ? 'Submitting…' : 'Submit task'}
        </button>
      </div>
      </> : <p className="muted" data-testid="no-sample-task">No quality-control task for you now.</p>}
    </Layout>
  );
}
