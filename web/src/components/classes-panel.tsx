import { useState, type FormEvent } from 'react';
import { ApiError, api } from '../api.js';
import type { LabelClass } from '../types.js';
import { attributesFromText, attributesToText, skeletonFromText, skeletonToText } from './class-specs-text.js';
import { ErrorBanner } from './layout.js';
import { useProjectAccess } from './project-access.js';

type ClassModality = NonNullable<LabelClass['modalities']>[number];
const CLASS_MODALITIES: readonly ClassModality[] = ['image', 'text', 'tabular', 'audio', 'video', 'llm'];

interface PendingDelete {
  cls: LabelClass;
  annotationCount: number;
}

/**
 * Classes with their colours: add, rename, recolour, delete (with the 409 for classes still in use explained), and
 * set a class's keypoint skeleton and attribute specs ("Shapes").
 */
export function ClassesPanel({ projectId, classes, onChange }: { projectId: number; classes: LabelClass[]; onChange: () => void }) {
  const [name, setName] = useState('');
  const [color, setColor] = useState<string | null>(null);
  const [editing, setEditing] = useState<number | null>(null);
  const [editName, setEditName] = useState('');
  const [pending, setPending] = useState<PendingDelete | null>(null);
  const [specsOf, setSpecsOf] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Classes are shown to everyone; changing them needs classes.write (otherwise no controls, and the reason).
  const denied = useProjectAccess(projectId).why('classes.write');

  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      onChange();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const add = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      // Without a picked colour the server assigns the next one from its palette.
      await api.post('/api/projects/{id}/classes', { path: { id: projectId }, body: color ? { name, color } : { name } });
      setName('');
      setColor(null);
    });
  };

  const remove = async (cls: LabelClass) => {
    setError(null);
    try {
      await api.delete('/api/classes/{class_id}', { path: { class_id: cls.id } });
      onChange();
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) {
        const count = Number((e.body as { annotation_count?: number }).annotation_count ?? 0);
        setPending({ cls, annotationCount: count });
      } else setError((e as Error).message);
    }
  };

  return (
    <section className="card" aria-label="Classes">
      <h3>Classes</h3>
      <ul className="class-list">
        {classes.map((c, i) => (
          <li key={c.id}>
            <input
              type="color"
              value={c.color}
              aria-label={`Colour of ${c.name}`}
              disabled={!!denied}
              title={denied}
              onChange={(e) => void act(() => api.patch('/api/classes/{class_id}', { path: { class_id: c.id }, body: { color: e.target.value } }))}
            />
            <span className="key">{i < 9 ? i + 1 : ''}</span>
            {editing === c.id ? (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  setEditing(null);
                  void act(() => api.patch('/api/classes/{class_id}', { path: { class_id: c.id }, body: { name: editName } }));
                }}
              >
                <input autoFocus value={editName} onChange={(e) => setEditName(e.target.value)} aria-label="New class name" />
              </form>
            ) : (
              <span className="class-name" onDoubleClick={() => !denied && (setEditing(c.id), setEditName(c.name))}>
                {c.name}
              </span>
            )}
            {!denied && (
              <>
                <button className="ghost small" onClick={() => (setEditing(c.id), setEditName(c.name))}>
                  Rename
                </button>
                <button className="ghost small" onClick={() => void remove(c)} aria-label={`Delete ${c.name}`}>
                  Delete
                </button>
                <button className="ghost small" onClick={() => setSpecsOf(specsOf === c.id ? null : c.id)} aria-label={`Shapes of ${c.name}`} title="Keypoint skeleton and attributes">
                  Shapes
                </button>
                <select
                  className="small"
                  value={c.modalities?.length === 1 ? c.modalities[0] : ''}
                  aria-label={`Modality of ${c.name}`}
                  title="Where the class is offered: sample pages list only the classes for their modality"
                  onChange={(e) => void act(() => api.patch('/api/classes/{class_id}', { path: { class_id: c.id }, body: { modalities: e.target.value ? [e.target.value as ClassModality] : null } }))}
                >
                  <option value="">{c.modalities && c.modalities.length > 1 ? c.modalities.join(', ') : 'every modality'}</option>
                  {CLASS_MODALITIES.map((m) => <option key={m} value={m}>{m} only</option>)}
                </select>
              </>
            )}
            {specsOf === c.id && !denied && (
              <ClassSpecsForm
                cls={c}
                onSave={(body) => act(async () => {
                  await api.patch('/api/classes/{class_id}', { path: { class_id: c.id }, body });
                  setSpecsOf(null);
                })}
                onError={setError}
              />
            )}
          </li>
        ))}
      </ul>
      {pending && (
        <div className="banner warn" role="alertdialog">
          <p>
            “{pending.cls.name}” is used by {pending.annotationCount} annotation{pending.annotationCount === 1 ? '' : 's'}, so it
            was not deleted.
          </p>
          <button
            className="danger"
            onClick={() =>
              void act(async () => {
                await api.delete('/api/classes/{class_id}', { path: { class_id: pending.cls.id }, query: { cascade: true } });
                setPending(null);
              })
            }
          >
            Delete the class and its {pending.annotationCount} annotations
          </button>
          <button className="ghost" onClick={() => setPending(null)}>
            Keep it
          </button>
        </div>
      )}
      {denied ? (
        <p className="muted small" data-testid="classes-denied">{denied}</p>
      ) : (
        <form className="inline-form" onSubmit={add}>
          <input type="color" value={color ?? '#888888'} onChange={(e) => setColor(e.target.value)} aria-label="New class colour" />
          <input placeholder="New class" required value={name} onChange={(e) => setName(e.target.value)} aria-label="New class name" />
          <button type="submit">Add</button>
        </form>
      )}
      <ErrorBanner message={error} onClose={() => setError(null)} />
    </section>
  );
}

/** A class's keypoint skeleton (point names, edges, left/right pairs) and attribute specs, written as short text. */
function ClassSpecsForm({ cls, onSave, onError }: {
  cls: LabelClass;
  onSave: (body: { skeleton: LabelClass['skeleton']; attributes: LabelClass['attributes'] }) => Promise<void>;
  onError: (m: string) => void;
}) {
  const initial = skeletonToText(cls.skeleton);
  const [points, setPoints] = useState(initial.points);
  const [edges, setEdges] = useState(initial.edges);
  const [flips, setFlips] = useState(initial.flips);
  const [attributes, setAttributes] = useState(attributesToText(cls.attributes ?? []));
  const save = (e: FormEvent) => {
    e.preventDefault();
    try {
      void onSave({ skeleton: skeletonFromText(points, edges, flips), attributes: attributesFromText(attributes) });
    } catch (err) {
      onError((err as Error).message);
    }
  };
  return (
    <form className="class-specs" onSubmit={save} aria-label={`Shapes of ${cls.name}`}>
      <label className="small">
        Keypoints (names in order)
        <input value={points} onChange={(e) => setPoints(e.target.value)} placeholder="nose, left_eye, right_eye" aria-label="Skeleton points" />
      </label>
      <label className="small">
        Edges
        <input value={edges} onChange={(e) => setEdges(e.target.value)} placeholder="nose-left_eye, nose-right_eye" aria-label="Skeleton edges" />
      </label>
      <label className="small">
        Left/right pairs (swapped by flips)
        <input value={flips} onChange={(e) => setFlips(e.target.value)} placeholder="left_eye-right_eye" aria-label="Skeleton flip pairs" />
      </label>
      <label className="small">
        Attributes, one a line
        <textarea rows={3} value={attributes} onChange={(e) => setAttributes(e.target.value)} placeholder={'occluded: checkbox\npose: select standing | sitting = standing\nheight: number 0..300'} aria-label="Attribute specs" />
      </label>
      <button type="submit">Save shapes</button>
    </form>
  );
}
