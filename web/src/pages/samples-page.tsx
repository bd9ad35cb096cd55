import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api, ApiError, upload } from '../api.js';
import { ErrorBanner, Layout } from '../components/layout.js';
import { useProjectAccess } from '../components/project-access.js';
import { SampleAudio } from '../components/samples/sample-audio.js';
import { SampleLlm } from '../components/samples/sample-llm.js';
import { SampleReview } from '../components/samples/sample-review.js';
import { SampleTasks, useSampleTasks } from '../components/samples/sample-tasks.js';
import { SampleTable, useRegression } from '../components/samples/sample-table.js';
import { SampleText } from '../components/samples/sample-text.js';
import { SampleVideo } from '../components/samples/sample-video.js';
import { SendFrames } from '../components/samples/send-frames.js';
import { isTyping } from '../components/samples/sample-view.js';
import { Link, navigate, useLocation } from '../router.js';
import type { LabelClass, Member, Project, ResponseOf, Sample, SampleModality, SamplePatch } from '../types.js';

const MODALITIES: [SampleModality, string][] = [['text', 'Text'], ['tabular', 'Tabular'], ['audio', 'Audio'], ['video', 'Video'], ['llm', 'LLM']];
const PAGE = 200;
const LOCK_RENEW_MS = 30_000;

type Lock = ResponseOf<'/api/samples/{sample_id}/lock', 'post'>;

/**
 * Samples of one modality, labelled from the keyboard: ← / → (or P / N) move between samples, 1–9 pick a class
 * (text spans, clip segments, labels), each view adds its own keys. Tabular samples show as a virtualised table.
 * The open sample is locked for the user while it is shown (renewed, released on leave), as in the image editor. Its
 * review state and assignee show below it, with submit and review controls for the roles that may use them.
 * Below project admin, a project with quality control shows the caller's dealt tasks instead (issue 29).
 */
export default function SamplesPage({ projectId }: { projectId: number }) {
  const tasks = useSampleTasks(projectId);
  if (tasks === undefined) return <Layout title="Samples"><p className="muted">Loading…</p></Layout>;
  return tasks ? <SampleTasks projectId={projectId} first={tasks.task} /> : <ProjectSamples projectId={projectId} />;
}

function ProjectSamples({ projectId }: { projectId: number }) {
  const { query } = useLocation();
  const modality = (MODALITIES.find(([m]) => m === query.get('modality'))?.[0] ?? 'text') as SampleModality;
  const [project, setProject] = useState<Project | null>(null);
  const [allClasses, setClasses] = useState<LabelClass[]>([]);
  // Only the classes for this modality (a class for every modality has none named): a tabular target offers no span classes.
  const classes = useMemo(() => allClasses.filter((c) => !c.modalities || c.modalities.includes(modality)), [allClasses, modality]);
  const [samples, setSamples] = useState<Sample[]>([]);
  const [total, setTotal] = useState(0);
  const [index, setIndex] = useState(0);
  const [lock, setLock] = useState<Lock | null>(null);
  const [me, setMe] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string>('');
  const [members, setMembers] = useState<Member[]>([]);
  const { why } = useProjectAccess(projectId);
  const loading = useRef(false);

  const loadProject = useCallback(() => {
    api.get('/api/projects/{id}', { path: { id: projectId } }).then(setProject, (e) => setError((e as Error).message));
    api.get('/api/projects/{id}/classes', { path: { id: projectId } }).then(setClasses, (e) => setError((e as Error).message));
    api.get('/api/projects/{id}/members', { path: { id: projectId } }).then(setMembers, () => undefined);
  }, [projectId]);

  const loadMore = useCallback(async (reset = false) => {
    if (loading.current) return;
    loading.current = true;
    try {
      const after = reset ? undefined : samples.at(-1)?.id;
      const res = await api.page('/api/projects/{id}/samples', { path: { id: projectId }, query: { modality, limit: PAGE, after } });
      setTotal(Number(res.headers.get('X-Total-Count') ?? 0));
      setSamples((prev) => (reset ? res.data : [...prev, ...res.data]));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      loading.current = false;
    }
  }, [projectId, modality, samples]);

  useEffect(loadProject, [projectId]);
  useEffect(() => {
    api.get('/api/auth/me').then((u) => setMe(u.id), () => undefined);
  }, []);
  useEffect(() => {
    setSamples([]);
    setIndex(0);
    void loadMore(true);
  }, [projectId, modality]);

  // `?sample=<id>` (the Health tab's links) opens that sample: pages are read until it is loaded, then it is shown once.
  const wanted = Number(query.get('sample')) || null;
  const shownWanted = useRef<number | null>(null);
  useEffect(() => {
    if (wanted === null || shownWanted.current === wanted || samples.length === 0) return;
    const at = samples.findIndex((s) => s.id === wanted);
    if (at >= 0) {
      shownWanted.current = wanted;
      setIndex(at);
    } else if (samples.length < total && samples[samples.length - 1].id < wanted) {
      void loadMore();
    }
  }, [wanted, samples, total]);

  const sample = modality === 'tabular' ? undefined : samples[index];
  const regression = useRegression(projectId, modality === 'tabular', setError, total);

  // The open sample's lock: taken when it is shown, renewed while it stays, released when the user moves on.
  useEffect(() => {
    if (!sample) return;
    let live = true;
    const take = () =>
      api.post('/api/samples/{sample_id}/lock', { path: { sample_id: sample.id } }).then(
        (l) => live && setLock(l),
        (e) => {
          if (live && e instanceof ApiError && e.status === 409) setLock((e.body as { lock: Lock }).lock);
        },
      );
    void take();
    const timer = setInterval(take, LOCK_RENEW_MS);
    return () => {
      live = false;
      clearInterval(timer);
      setLock(null);
      void api.delete('/api/samples/{sample_id}/lock', { path: { sample_id: sample.id } }).catch(() => undefined);
    };
  }, [sample?.id]);

  const readOnly = !!lock && me !== null && lock.user_id !== me;

  /** The PATCHes of each sample, one after another: a later edit is never overtaken by an earlier one. */
  const saving = useRef(new Map<number, Promise<void>>());
  const save = (target: Sample, patch: SamplePatch) => {
    // Shown at once, so that a quick second key builds on this edit instead of on the value before it.
    setSamples((prev) => prev.map((s) => (s.id === target.id ? ({ ...s, ...patch } as Sample) : s)));
    setStatus('Saving…');
    const replace = (fresh: Sample) => setSamples((prev) => prev.map((s) => (s.id === fresh.id ? fresh : s)));
    const mine: Promise<void> = (saving.current.get(target.id) ?? Promise.resolve()).then(() =>
      api.patch('/api/samples/{sample_id}', { path: { sample_id: target.id }, body: patch }).then(
        (updated) => {
          // Only the last edit's answer is the sample as the page now shows it.
          if (saving.current.get(target.id) !== mine) return;
          replace(updated);
          setStatus('Saved');
          loadProjectCounts();
        },
        (e) => {
          setStatus('');
          setError((e as Error).message);
          // The edit did not happen: show the sample as stored.
          void api.get('/api/samples/{sample_id}', { path: { sample_id: target.id } }).then(replace, () => undefined);
        },
      ),
    );
    saving.current.set(target.id, mine);
  };
  const loadProjectCounts = () => api.get('/api/projects/{id}', { path: { id: projectId } }).then(setProject, () => undefined);

  const go = (delta: number) => {
    const next = Math.min(Math.max(0, index + delta), Math.max(0, total - 1));
    if (next >= samples.length - 5 && samples.length < total) void loadMore();
    if (next < samples.length) setIndex(next);
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (modality === 'tabular' || isTyping(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === 'ArrowRight' || e.key === 'n') go(1);
      else if (e.key === 'ArrowLeft' || e.key === 'p') go(-1);
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  const view = sample && { sample, classes, readOnly, multiLabel: project?.multi_label ?? false, save: (patch: SamplePatch) => save(sample, patch) };
  return (
    <Layout
      title={`${project?.name ?? `Project ${projectId}`} · samples`}
      actions={<Link href={`/projects/${projectId}`} className="button">Back to project</Link>}
    >
      <ErrorBanner message={error} onClose={() => setError(null)} />
      <nav className="tabs" role="tablist" aria-label="Sample modality">
        {MODALITIES.map(([m, label]) => (
          <button key={m} role="tab" aria-selected={m === modality} className={m === modality ? 'active' : ''} onClick={() => navigate(`/projects/${projectId}/samples?modality=${m}`, true)}>
            {label}
          </button>
        ))}
      </nav>
      <ImportForm projectId={projectId} modality={modality} onDone={(created) => {
        setStatus(`Imported ${created} samples`);
        loadProject();
        void loadMore(true);
      }} onError={setError} />
      <section className="stats" aria-label="Progress">
        <div><b data-testid="labelled-count">{project?.labelled_sample_count ?? 0}</b> of {project?.sample_count ?? 0} samples labelled</div>
        {modality !== 'tabular' && total > 0 && <div data-testid="position">{index + 1} / {total}</div>}
        <div className="muted" role="status">{status}</div>
        {readOnly && lock && <div className="banner" role="alert">Locked by {lock.email} until {new Date(lock.expires_at).toLocaleTimeString()} — read only</div>}
      </section>
      {modality !== 'tabular' && classes.length > 0 && (
        <p className="muted">
          Keys: {classes.slice(0, 9).map((c, i) => `${i + 1} ${c.name}`).join(' · ')} · ←/→ previous/next
          {modality === 'llm' && ' · 1–9 rate · A/B/T preference'}
          {!why('reviews.decide') && (modality === 'llm' ? ' · Shift+A/R/C approve/reject/request changes' : ' · A/R/C approve/reject/request changes')}
        </p>
      )}
      {total === 0 && <p className="muted">No {modality} samples yet: import some above.</p>}
      {modality === 'tabular' && samples.length > 0 && regression !== undefined && (
        <SampleTable rows={samples} total={total} classes={classes} readOnly={false} regression={regression} onChange={save} onNearEnd={() => void loadMore()} focusId={wanted} />
      )}
      {view && modality === 'text' && <SampleText key={sample.id} {...view} />}
      {view && modality === 'audio' && <SampleAudio key={sample.id} {...view} />}
      {view && modality === 'video' && <SampleVideo key={sample.id} {...view} />}
      {view && modality === 'video' && <SendFrames key={`send-${sample.id}`} sample={sample} onError={setError} />}
      {view && modality === 'llm' && <SampleLlm key={sample.id} {...view} />}
      {sample && (
        <SampleReview
          sample={sample}
          me={me}
          nameOf={(id) => members.find((m) => m.user_id === id)?.email}
          why={why}
          shiftKeys={modality === 'llm'}
          onChange={(updated) => setSamples((prev) => prev.map((s) => (s.id === updated.id ? updated : s)))}
          onError={setError}
        />
      )}
      {sample && (
        <div className="toolbar">
          <button onClick={() => go(-1)} disabled={index === 0}>← Previous</button>
          <button onClick={() => go(1)} disabled={index >= total - 1}>Next →</button>
          <select aria-label="Split" value={sample.split ?? ''} disabled={readOnly} onChange={(e) => save(sample, { split: (e.target.value || null) as Sample['split'] })}>
            <option value="">No split</option>
            <option value="train">Train</option>
            <option value="valid">Valid</option>
            <option value="test">Test</option>
          </select>
        </div>
      )}
    </Layout>
  );
}

/** Imports a file into the current modality: JSONL/CSV text, a CSV with its target column, or JSONL (zip) media/LLM. */
function ImportForm({ projectId, modality, onDone, onError }: { projectId: number; modality: SampleModality; onDone(created: number): void; onError(m: string): void }) {
  const [busy, setBusy] = useState(false);
  const submit = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const route = modality === 'text' ? 'text' : modality === 'tabular' ? 'tabular' : 'jsonl';
    if (route === 'jsonl') form.set('modality', modality);
    // Text parts first: the server reads them with the file.
    const ordered = new FormData();
    for (const [k, v] of form) if (k !== 'file') ordered.append(k, v);
    ordered.append('file', form.get('file')!);
    setBusy(true);
    upload(`/api/projects/{id}/import/${route}`, { path: { id: projectId } }, ordered, () => undefined).promise.then(
      (r) => {
        setBusy(false);
        (e.target as HTMLFormElement).reset();
        onDone(r.created);
      },
      (err) => {
        setBusy(false);
        onError((err as Error).message);
      },
    );
  };
  return (
    <form className="toolbar" aria-label="Import samples" onSubmit={submit}>
      <input type="file" name="file" required aria-label="Samples file" />
      {modality === 'tabular' && <input name="target" placeholder="target column" required aria-label="Target column" />}
      {modality === 'text' && <input name="text_field" placeholder="text field (text)" aria-label="Text field" />}
      <button className="primary" disabled={busy}>{busy ? 'Importing…' : 'Import'}</button>
    </form>
  );
}
