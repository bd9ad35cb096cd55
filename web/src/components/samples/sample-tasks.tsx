import { useEffect, useMemo, useRef, useState } from 'react';
import { api, ApiError } from '../../api.js';
import { ErrorBanner, Layout } from '../layout.js';
import { accessOf } from '../project-access.js';
import { Link } from '../../router.js';
import type { LabelClass, ResponseOf, Sample, SamplePatch } from '../../types.js';
import { SampleAnswer } from './sample-answer.js';
import { taskReviewNote } from '../../editor/task-shapes.js';

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
 * The caller's dealt sample, shown with their own answer (the task's classes, spans and value, never the sample's),
 * saved with PUT on the task; Submit task submits it and opens the next. Every modality, with the controls the lead's
 * page uses: text, audio (segments and transcript), video, a tabular row (its target: a class, or a number when the
 * project's target is numeric, as the server says for the lead's table too) and an LLM record (rating,
 * preferred response, class); in a multi-label project a sample's classes are ticked or toggled with their keys.
 * Nothing tells ground-truth samples apart.
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

  const [multiLabel, setMultiLabel] = useState(false);
  useEffect(() => {
    api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then(setClasses, (e) => onError((e as Error).message));
    api.get('/api/projects/{id}', { path: { id: projectId } }).then((p) => setMultiLabel(p.multi_label), (e) => onError((e as Error).message));
  }, [projectId]);
  useEffect(() => {
    setSample(null);
    if (task) api.get('/api/samples/{sample_id}', { path: { sample_id: task.sample_id } }).then(setSample, (e) => onError((e as Error).message));
  }, [task?.sample_id]);

  /** Saves the classes, spans and value, one PUT after another: a later edit is never overtaken by an earlier one. */
  const save = (patch: SamplePatch) => {
    if (!task) return;
    const body = { ...('label' in patch && { label: patch.label }), ...('spans' in patch && { spans: patch.spans }), ...('value' in patch && { value: patch.value }) };
    if (Object.keys(body).length === 0) return; // the split is the lead's, not an answer
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

  const shown = useMemo(() => sample && task && ({ ...sample, label: task.label, spans: task.spans, value: task.value } as Sample), [sample, task]);
  // A task given back by its reviewer says what to change, as an image task does.
  const note = task && taskReviewNote(task);
  const own = classes.filter((c) => !shown || !c.modalities || c.modalities.includes(shown.modality));
  return (
    <Layout title="Samples · quality-control task" actions={<Link href={`/projects/${projectId}`} className="button">Back to project</Link>}>
      <ErrorBanner message={error} onClose={() => onError(null)} />
      {task ? <>
      <section className="stats" aria-label="Progress">
        <div data-testid="sample-task">Quality-control task</div>
        <div className="muted" role="status">{status}</div>
      </section>
      {shown?.modality === 'llm' && <p className="muted">Keys: 1–9 rate · A/B/T preference</p>}
      {shown && !['llm', 'tabular'].includes(shown.modality) && own.length > 0 && <p className="muted">Keys: {own.slice(0, 9).map((c, i) => `${i + 1} ${c.name}`).join(' · ')}</p>}
      {note && (
        <span className="review-badge changes" data-testid="task-review-note" title={note.comment}>
          Changes requested: {note.comment}
        </span>
      )}
      {shown && <SampleAnswer projectId={projectId} sample={shown} classes={classes} multiLabel={multiLabel} save={task.status === 'open' ? save : undefined} onError={onError} />}
      <div className="toolbar">
        <button className="primary" onClick={() => void submit()} disabled={submitting || !sample} data-testid="submit-sample-task" title="Submit your answer on this sample and open your next task">
          {submitting ? 'Submitting…' : 'Submit task'}
        </button>
      </div>
      </> : <p className="muted" data-testid="no-sample-task">No quality-control task for you now.</p>}
    </Layout>
  );
}
