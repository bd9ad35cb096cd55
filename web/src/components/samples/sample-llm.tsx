import { useEffect } from 'react';
import type { LlmValue } from '../../types.js';
import { colorOf, isTyping, labelsOf, pickedLabel, type SampleViewProps } from './sample-view.js';

/** An LLM record: prompt or chat, one response or a chosen/rejected pair. Keys 1–9 rate it; A / B / T choose; a class button toggles its class. */
export function SampleLlm({ sample, classes, readOnly, multiLabel, save }: SampleViewProps) {
  const value = (sample.value && typeof sample.value === 'object' ? sample.value : {}) as LlmValue;
  const d = sample.data;
  const set = (next: LlmValue) => save({ value: { ...value, ...next } });

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (readOnly || isTyping(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (/^[1-9]$/.test(e.key)) set({ rating: Number(e.key) });
      else if (e.key === 'a' && d.chosen !== undefined) set({ preference: 'chosen' });
      else if (e.key === 'b' && d.chosen !== undefined) set({ preference: 'rejected' });
      else if (e.key === 't' && d.chosen !== undefined) set({ preference: 'tie' });
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  const labels = labelsOf(sample);
  return (
    <div className="sample-llm">
      {d.prompt !== undefined && <div className="llm-turn"><b>Prompt</b><p>{d.prompt}</p></div>}
      {Array.isArray(d.messages) && d.messages.map((m: { role: string; content: string }, i: number) => (
        <div key={i} className="llm-turn"><b>{m.role}</b><p>{m.content}</p></div>
      ))}
      {d.response !== undefined && <div className="llm-turn"><b>Response</b><p>{d.response}</p></div>}
      {d.chosen !== undefined && (
        <div className="llm-pair">
          {(['chosen', 'rejected'] as const).map((side, i) => (
            <button key={side} className={`llm-choice ${value.preference === side ? 'selected' : ''}`} disabled={readOnly} aria-pressed={value.preference === side} onClick={() => set({ preference: side })}>
              <b>{i === 0 ? 'A' : 'B'}</b>
              <p>{d[side]}</p>
            </button>
          ))}
          <button className={value.preference === 'tie' ? 'selected' : ''} disabled={readOnly} onClick={() => set({ preference: 'tie' })}>Tie (T)</button>
        </div>
      )}
      <div className="toolbar" aria-label="Rating">
        Rating:
        {[1, 2, 3, 4, 5, 6, 7, 8, 9].map((r) => (
          <button key={r} className={value.rating === r ? 'primary' : 'ghost'} disabled={readOnly} onClick={() => set({ rating: r })}>{r}</button>
        ))}
      </div>
      <div className="toolbar" aria-label="Class">
        Class:
        {classes.map((c) => (
          <button key={c.id} disabled={readOnly} aria-pressed={labels.includes(c.name)} className={labels.includes(c.name) ? 'primary' : 'ghost'} style={{ borderColor: colorOf(classes, c.name) }}
            onClick={() => save({ label: multiLabel ? pickedLabel(sample, c.name, true) : labels.includes(c.name) ? null : c.name })}>{c.name}</button>
        ))}
      </div>
    </div>
  );
}
