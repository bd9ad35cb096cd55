import { useEffect, useRef, useState } from 'react';
import type { LabelClass } from '../types.js';

/** Whether the letters of `q` appear in `name` in order ("bkn" in "black-knight"). */
const inOrder = (name: string, q: string) => {
  let i = 0;
  for (const ch of name) if (ch === q[i]) i++;
  return i === q.length;
};

/**
 * The classes a typed text finds, case ignored: names starting with it first, then names containing it, then names
 * holding its letters in order.
 */
export function matchClasses(classes: LabelClass[], text: string): LabelClass[] {
  const q = text.trim().toLowerCase();
  if (!q) return classes;
  const rank = (c: LabelClass) => {
    const name = c.name.toLowerCase();
    return name.startsWith(q) ? 0 : name.includes(q) ? 1 : inOrder(name, q) ? 2 : 3;
  };
  return classes.map((c) => [c, rank(c)] as const).filter(([, r]) => r < 3).sort((a, b) => a[1] - b[1]).map(([c]) => c);
}

/**
 * Type-ahead class search (Q in the editor): a box over the class list; typing narrows the classes, ↑/↓ move,
 * Enter picks the highlighted one (as a class key would: the selected shape or suggestion takes it), Esc closes.
 * With `onAdd` (a role that may change classes), a name no class has is added as a new class by Enter.
 */
export function ClassSearch({ classes, colors, onPick, onAdd, onClose }: {
  classes: LabelClass[];
  colors: Map<number, string>;
  onPick: (classId: number) => void;
  onAdd: ((name: string) => Promise<void>) | null;
  onClose: () => void;
}) {
  const [text, setText] = useState('');
  const [at, setAt] = useState(0);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const found = matchClasses(classes, text);
  const exact = classes.some((c) => c.name.toLowerCase() === text.trim().toLowerCase());
  const canAdd = onAdd !== null && text.trim() !== '' && !exact;
  // The rows: the classes found, then "Add …" when the name is new.
  const count = found.length + (canAdd ? 1 : 0);
  const chosen = Math.min(at, Math.max(0, count - 1));

  const choose = async (i: number) => {
    if (i < found.length) return onPick(found[i].id);
    if (!canAdd || busy) return;
    setBusy(true);
    try {
      await onAdd!(text.trim());
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="class-search" role="dialog" aria-label="Find a class">
      <input
        ref={input}
        value={text}
        placeholder={onAdd ? 'Find or add a class…' : 'Find a class…'}
        aria-label="Find a class"
        maxLength={100}
        onChange={(e) => (setText(e.target.value), setAt(0))}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') setAt(Math.min(count - 1, chosen + 1));
          else if (e.key === 'ArrowUp') setAt(Math.max(0, chosen - 1));
          else if (e.key === 'Enter') void choose(chosen);
          else if (e.key === 'Escape') onClose();
          else return;
          e.preventDefault();
          e.stopPropagation();
        }}
        onBlur={(e) => {
          // A click on a row picks it (the row's mousedown keeps the focus); leaving the box elsewhere closes it.
          if (!e.currentTarget.parentElement?.contains(e.relatedTarget as Node | null)) onClose();
        }}
      />
      <ul role="listbox" aria-label="Classes found">
        {found.map((c, i) => (
          <li key={c.id} role="option" aria-selected={i === chosen} className={i === chosen ? 'active' : ''} onMouseDown={(e) => (e.preventDefault(), void choose(i))}>
            <span className="swatch" style={{ background: colors.get(c.id) ?? c.color }} /> {c.name}
          </li>
        ))}
        {canAdd && (
          <li role="option" aria-selected={chosen === found.length} className={chosen === found.length ? 'active' : ''} onMouseDown={(e) => (e.preventDefault(), void choose(found.length))}>
            {busy ? 'Adding…' : `+ Add class “${text.trim()}”`}
          </li>
        )}
        {count === 0 && <li className="muted small">No class matches</li>}
      </ul>
    </div>
  );
}
