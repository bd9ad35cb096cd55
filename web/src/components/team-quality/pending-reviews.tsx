import { useEffect, useState, type ReactNode } from 'react';

/** What a pending task review entry shows in the list, images' and samples' alike. */
interface PendingEntry { task_id: number; user_id: number; email: string; display_name: string; round: number; submitted_at: string | null }

/**
 * A list of submitted quality-control tasks waiting for review (issue 29), images' or samples': the reviewer opens
 * one (`view`: the annotator's version, read-only, and the decision) and accepts it or requests changes with a
 * comment; a change request gives the task back to its annotator, whose resubmission comes back here (round 2, …).
 */
export function PendingReviews<E extends PendingEntry>({ label, noun, load, itemOf, itemLabel = itemOf, view, onError }: {
  label: string;
  noun: 'image' | 'sample';
  load: () => Promise<E[]>;
  itemOf: (entry: E) => number;
  /** What the list shows for the entry's item (its id unless said). */
  itemLabel?: (entry: E) => ReactNode;
  view: (entry: E, onDecided: (text: string) => void) => ReactNode;
  onError: (message: string) => void;
}) {
  const [pending, setPending] = useState<E[] | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const reload = () => void load().then(setPending, (e) => onError((e as Error).message));
  useEffect(reload, [load]);
  const entry = pending?.find((p) => p.task_id === open) ?? null;
  const decided = (text: string) => {
    setDone(text);
    setOpen(null);
    reload();
  };
  return (
    <section className="card" aria-label={label}>
      <div className="toolbar">
        <h3>{label}</h3>
        <div className="spacer" />
        <button className="ghost" onClick={reload} title="Load the pending task submissions again">
          Reload
        </button>
      </div>
      {done && (
        <p className="muted" data-testid="task-review-done">
          {done}
        </p>
      )}
      {pending === null ? (
        <p className="muted">Loading…</p>
      ) : pending.length === 0 ? (
        <p className="muted" data-testid="task-reviews-empty">
          No submitted task waits for review.
        </p>
      ) : (
        <table className="list" data-testid="task-reviews">
          <thead>
            <tr>
              <th>Annotator</th>
              <th>{noun === 'image' ? 'Image' : 'Sample'}</th>
              <th>Round</th>
              <th>Submitted</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {pending.map((p) => (
              <tr key={p.task_id} data-task={p.task_id} {...{ [`data-${noun}`]: itemOf(p) }}>
                <td>{p.display_name || p.email}</td>
                <td>{itemLabel(p)}</td>
                <td>{p.round > 1 ? `${p.round} (resubmitted)` : p.round}</td>
                <td>{p.submitted_at?.slice(0, 16).replace('T', ' ') ?? ''}</td>
                <td>
                  <button className="ghost" onClick={() => setOpen(p.task_id)} data-testid="open-task-review">
                    Open
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {entry && <div key={entry.task_id}>{view(entry, decided)}</div>}
    </section>
  );
}
