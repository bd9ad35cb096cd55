import { useEffect, useState } from 'react';
import { api } from '../api.js';
import type { LabelClass, Revision } from '../types.js';

const ACTION: Record<Revision['action'], string> = { create: 'created', update: 'changed', delete: 'deleted', revert: 'reverted' };

/** What changed between two states, in a few words ("class car → person, geometry"). */
function describeChange(r: Revision, className: (id: number) => string): string {
  const { before, after } = r;
  if (!before || !after) return after ? `${className(after.class_id)} ${after.annotation_type}` : '';
  const parts: string[] = [];
  if (before.class_id !== after.class_id) parts.push(`class ${className(before.class_id)} → ${className(after.class_id)}`);
  if (JSON.stringify(before.geometry) !== JSON.stringify(after.geometry)) parts.push('shape');
  if (before.annotation_type !== after.annotation_type) parts.push(`${before.annotation_type} → ${after.annotation_type}`);
  return parts.join(', ') || 'no visible change';
}

/**
 * The history of one annotation, newest first: who changed what and when, with "Revert" to restore the state an
 * earlier revision left (recorded by the server as a new revision).
 */
export function AnnotationHistory({ annotationId, version, classes, userName, readOnly, onReverted, onError }: {
  annotationId: number;
  /** Changes whenever the annotation changes, so the list is fetched again. */
  version: string;
  classes: LabelClass[];
  userName: (id: number | null) => string;
  readOnly: boolean;
  onReverted: (annotationId: number) => void;
  onError: (message: string) => void;
}) {
  const [revisions, setRevisions] = useState<Revision[] | null>(null);
  const [busy, setBusy] = useState<number | null>(null);
  const className = (id: number) => classes.find((c) => c.id === id)?.name ?? `class ${id}`;

  useEffect(() => {
    let live = true;
    // Saves land a moment after the edit; ask once it has had time to be recorded.
    const timer = setTimeout(() => {
      api.get('/api/annotations/{id}/revisions', { path: { id: annotationId } }).then(
        (list) => live && setRevisions([...list].sort((a, b) => b.id - a.id)),
        (e) => {
          if (!live) return;
          setRevisions([]);
          onError(`History: ${(e as Error).message}`);
        },
      );
    }, 150);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [annotationId, version]);

  const revert = async (r: Revision) => {
    setBusy(r.id);
    try {
      await api.post('/api/annotations/{id}/revert', { path: { id: annotationId }, body: { revision_id: r.id } });
      onReverted(annotationId);
    } catch (e) {
      onError(`Revert: ${(e as Error).message}`);
    } finally {
      setBusy(null);
    }
  };

  if (revisions === null) return <p className="muted small">Loading history…</p>;
  return (
    <ol className="history" aria-label="Annotation history" data-testid="annotation-history">
      {revisions.map((r, i) => (
        <li key={r.id} data-revision={r.id} data-action={r.action}>
          <div>
            <b>{ACTION[r.action]}</b> <span className="muted">by {userName(r.user_id)}</span>
          </div>
          <div className="muted">
            {new Date(r.created_at).toLocaleString()}
            {describeChange(r, className) && ` · ${describeChange(r, className)}`}
          </div>
          {i > 0 && r.after !== null && !readOnly && (
            <button className="small" disabled={busy !== null} onClick={() => void revert(r)} title="Restore the annotation as it was after this change">
              {busy === r.id ? 'Reverting…' : 'Revert to this'}
            </button>
          )}
        </li>
      ))}
    </ol>
  );
}
