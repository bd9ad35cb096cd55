import { useState } from 'react';
import type { ResponseOf } from '../types.js';

/** GET /api/pipeline/defaults: both default configs, and every option (`key` dotted for nested groups). */
export type PipelineDefaults = ResponseOf<'/api/pipeline/defaults', 'get'>;
export type OptionDescriptor = PipelineDefaults['options']['preprocessing_config'][number];

export type ConfigName = keyof PipelineDefaults['options'];
/** Values the user changed, by dotted key; options left alone are not sent, so the server's defaults apply. */
export type Changes = Record<string, unknown>;

const humanize = (s: string) => s.replace(/_/g, ' ').replace(/^\w/, (c) => c.toUpperCase());
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The nested config object the API takes, from dotted keys. */
export function nest(changes: Changes): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    const parts = key.split('.');
    let at = out;
    for (const p of parts.slice(0, -1)) at = (at[p] ??= {}) as Record<string, unknown>;
    at[parts[parts.length - 1]] = value;
  }
  return out;
}

function prefixOf(key: string): string {
  const i = key.lastIndexOf('.');
  return i < 0 ? '' : key.slice(0, i);
}

/**
 * Applies one edit. Changing an option of a group that has an `enabled` switch turns that switch on (tiling rows
 * mean nothing with tiling off); setting an option back to its default forgets it, except the switches.
 */
export function applyChange(options: OptionDescriptor[], changes: Changes, key: string, value: unknown): Changes {
  const option = options.find((o) => o.key === key);
  const next = { ...changes };
  // A switch is always sent as set: the server turns a group on when any of its options is given without it.
  const isSwitch = key === 'enabled' || key.endsWith('.enabled');
  if (option && same(option.default, value) && !isSwitch) delete next[key];
  else next[key] = value;
  const prefix = prefixOf(key);
  const enabledKey = prefix ? `${prefix}.enabled` : 'enabled';
  const enabled = options.find((o) => o.key === enabledKey);
  if (enabled && key !== enabledKey && !(enabledKey in changes) && next[key] !== undefined && enabled.default === false) next[enabledKey] = true;
  return next;
}

function OptionInput({ option, value, onChange }: { option: OptionDescriptor; value: unknown; onChange: (v: unknown) => void }) {
  const name = option.key;
  if (option.type === 'boolean') {
    return <input type="checkbox" name={name} checked={Boolean(value)} onChange={(e) => onChange(e.target.checked)} />;
  }
  if (option.type === 'integer' || option.type === 'number') {
    const step = option.type === 'integer' ? 1 : option.maximum !== undefined && option.maximum <= 1 ? 0.01 : 0.5;
    return (
      <input
        type="number"
        className="narrow"
        name={name}
        min={option.minimum}
        max={option.maximum}
        step={step}
        value={String(value ?? '')}
        onChange={(e) => onChange(e.target.value === '' ? option.default : Number(e.target.value))}
      />
    );
  }
  if (option.type === 'string' && option.enum) {
    return (
      <select name={name} value={String(value)} onChange={(e) => onChange(e.target.value)}>
        {option.enum.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    );
  }
  if (option.type === 'array' && option.items_enum) {
    const chosen = Array.isArray(value) ? (value as string[]) : [];
    return (
      <span className="choices">
        {option.items_enum.map((v) => (
          <label key={v} className="check">
            <input
              type="checkbox"
              name={`${name}:${v}`}
              checked={chosen.includes(v)}
              onChange={(e) => onChange(e.target.checked ? [...chosen, v] : chosen.filter((c) => c !== v))}
            />
            {v}
          </label>
        ))}
      </span>
    );
  }
  if (option.type === 'array') {
    const list = Array.isArray(value) ? (value as unknown[]).join(', ') : '';
    return <ListInput name={name} text={list} onChange={(t) => onChange(t.split(',').map((s) => s.trim()).filter(Boolean))} />;
  }
  if (option.type === 'object') return <JsonInput name={name} value={value} onChange={onChange} />;
  return <input name={name} value={String(value ?? '')} onChange={(e) => onChange(e.target.value)} />;
}

/** Comma-separated text, kept as typed until it loses focus. */
function ListInput({ name, text, onChange }: { name: string; text: string; onChange: (t: string) => void }) {
  const [draft, setDraft] = useState<string | null>(null);
  return <input name={name} placeholder="comma separated" value={draft ?? text} onChange={(e) => setDraft(e.target.value)} onBlur={() => (draft !== null && onChange(draft), setDraft(null))} />;
}

/** A JSON object typed as text; applied when it parses, flagged while it does not. */
function JsonInput({ name, value, onChange }: { name: string; value: unknown; onChange: (v: unknown) => void }) {
  const [text, setText] = useState(() => JSON.stringify(value ?? {}));
  const [bad, setBad] = useState(false);
  return (
    <input
      name={name}
      className={bad ? 'invalid' : ''}
      value={text}
      title={bad ? 'Not a JSON object' : undefined}
      onChange={(e) => {
        setText(e.target.value);
        try {
          const parsed: unknown = JSON.parse(e.target.value || '{}');
          const ok = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
          setBad(!ok);
          if (ok) onChange(parsed);
        } catch {
          setBad(true);
        }
      }}
    />
  );
}

/**
 * The preprocessing or augmentation form, generated from the option list the server publishes: one field per
 * option, grouped by the dotted key's prefix, so a new server option appears here with no change to the page.
 */
export function PipelineForm({ title, options, changes, onChange }: { title: string; options: OptionDescriptor[]; changes: Changes; onChange: (c: Changes) => void }) {
  const groups = new Map<string, OptionDescriptor[]>();
  for (const o of options) {
    const g = prefixOf(o.key);
    groups.set(g, [...(groups.get(g) ?? []), o]);
  }
  const changed = Object.keys(changes).length;
  return (
    <details className="pipeline-form">
      <summary>
        {title} {changed > 0 && <span className="muted small">({changed} changed)</span>}
      </summary>
      {[...groups].map(([group, opts]) => (
        <fieldset key={group}>
          {group && <legend>{humanize(group.split('.').pop()!)}</legend>}
          {opts.map((o) => (
            <div key={o.key} className={`option${o.key in changes ? ' changed' : ''}`} title={o.description}>
              <span className="option-name">
                {humanize(o.key.split('.').pop()!)}
                {(o.minimum !== undefined || o.maximum !== undefined) && (
                  <span className="muted small">
                    {' '}
                    {o.minimum ?? ''}–{o.maximum ?? ''}
                  </span>
                )}
              </span>
              <OptionInput option={o} value={o.key in changes ? changes[o.key] : o.default} onChange={(v) => onChange(applyChange(options, changes, o.key, v))} />
            </div>
          ))}
        </fieldset>
      ))}
    </details>
  );
}
