import { useEffect, useRef } from 'react';
import type { TextSpan } from '../../types.js';
import { SampleLabels } from './sample-labels.js';
import { classOfKey, colorOf, isTyping, pickedLabel, type SampleViewProps } from './sample-view.js';

/**
 * A text sample: select characters with the mouse and press 1–9 to make them a span of that class; 1–9 with no
 * selection sets the sample's label (toggles a class, in a multi-label project). Click a span (or its Remove in the list) to remove it. Offsets are UTF-16 code units, as the API counts.
 */
export function SampleText(props: SampleViewProps) {
  const { sample, classes, readOnly, multiLabel, save } = props;
  const text = String(sample.data.text ?? '');
  const spans = (sample.spans ?? []) as TextSpan[];
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (readOnly || isTyping(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      const cls = classOfKey(classes, e.key);
      if (!cls) return;
      e.preventDefault();
      const range = selectedRange();
      if (range) {
        save({ spans: [...spans, { start: range[0], end: range[1], label: cls.name }].sort((a, b) => a.start - b.start) });
        window.getSelection()?.removeAllRanges();
      } else {
        save({ label: pickedLabel(sample, cls.name, multiLabel) });
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  /** The selection as [start, end) offsets into the text, from the segments' data-start attributes. */
  const selectedRange = (): [number, number] | null => {
    const selection = window.getSelection();
    if (!selection || selection.isCollapsed || !box.current) return null;
    const offsetOf = (node: Node | null, offset: number) => {
      const segment = (node?.nodeType === Node.TEXT_NODE ? node.parentElement : (node as HTMLElement | null))?.closest<HTMLElement>('[data-start]');
      if (!segment || !box.current!.contains(segment)) return null;
      return Number(segment.dataset.start) + (node?.nodeType === Node.TEXT_NODE ? offset : 0);
    };
    const a = offsetOf(selection.anchorNode, selection.anchorOffset);
    const b = offsetOf(selection.focusNode, selection.focusOffset);
    if (a === null || b === null || a === b) return null;
    return [Math.min(a, b), Math.max(a, b)];
  };

  // Segments cut at every span boundary; each is coloured by the last span covering it.
  const cuts = [...new Set([0, text.length, ...spans.flatMap((s) => [s.start, s.end])])].sort((a, b) => a - b);
  const segments = cuts.slice(0, -1).map((start, i) => {
    const end = cuts[i + 1];
    const covering = spans.filter((s) => s.start <= start && s.end >= end);
    return { start, end, span: covering.at(-1) };
  });

  return (
    <div className="sample-text">
      <SampleLabels {...props} empty="No label — press 1–9" />
      <div ref={box} className="sample-text-body" data-testid="sample-text">
        {segments.map((seg) =>
          seg.span ? (
            <mark
              key={seg.start}
              data-start={seg.start}
              title={`${seg.span.label} — click to remove`}
              style={{ background: `${colorOf(classes, seg.span.label)}55`, borderBottom: `2px solid ${colorOf(classes, seg.span.label)}` }}
              onClick={() => {
                if (readOnly || !window.getSelection()?.isCollapsed) return;
                const span = seg.span!;
                save({ spans: spans.filter((s) => s !== span) });
              }}
            >
              {text.slice(seg.start, seg.end)}
            </mark>
          ) : (
            <span key={seg.start} data-start={seg.start}>{text.slice(seg.start, seg.end)}</span>
          ),
        )}
      </div>
      <ul className="span-list" aria-label="Spans">
        {spans.map((s, i) => (
          <li key={i}>
            <span className="chip" style={{ background: colorOf(classes, s.label) }}>{s.label}</span> “{text.slice(s.start, s.end)}” [{s.start}, {s.end})
            {!readOnly && (
              <button className="ghost small" aria-label={`Remove span ${s.label} “${text.slice(s.start, s.end)}”`} title="Remove this span" onClick={() => save({ spans: spans.filter((x) => x !== s) })}>
                Remove
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
