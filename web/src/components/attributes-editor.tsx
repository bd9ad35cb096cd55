import { useEffect, useState } from 'react';
import type { AttributeSpec, AttributeValues } from '../types.js';

type Value = AttributeValues[string];

/** The value a shape holds for a spec: its own, else the spec's default, else the type's empty value. */
export function attributeValue(spec: AttributeSpec, values: AttributeValues | undefined): Value {
  const own = values?.[spec.name];
  if (own !== undefined) return own;
  if (spec.default !== undefined) return spec.default;
  if (spec.type === 'checkbox') return false;
  if (spec.type === 'select') return String(spec.values?.[0] ?? '');
  if (spec.type === 'number') return Number(spec.values?.[0] ?? 0);
  return '';
}

/**
 * The attributes of the selected shape, one field per spec of its class (checkbox, select, number, text). A change is
 * one undoable edit saved with the shape: checkboxes and selects at once, numbers and text when the field is left or
 * Enter is pressed.
 */
export function AttributesEditor({ specs, values, disabled, onChange }: {
  specs: AttributeSpec[];
  values: AttributeValues | undefined;
  disabled: boolean;
  onChange: (values: AttributeValues) => void;
}) {
  if (specs.length === 0) return null;
  const set = (name: string, value: Value) => {
    if (values?.[name] === value) return;
    // Every spec's value is sent: the shape then says what it holds, not what a default happened to be.
    const next: AttributeValues = {};
    for (const s of specs) next[s.name] = attributeValue(s, values);
    next[name] = value;
    onChange(next);
  };
  return (
    <div className="attributes-editor" data-testid="attributes-editor">
      <b className="small">Attributes</b>
      {specs.map((spec) => (
        <label key={spec.name} className="small attribute-row">
          <span>{spec.name}</span> <AttributeField spec={spec} value={attributeValue(spec, values)} disabled={disabled} onSet={(v) => set(spec.name, v)} />
        </label>
      ))}
    </div>
  );
}

function AttributeField({ spec, value, disabled, onSet }: { spec: AttributeSpec; value: Value; disabled: boolean; onSet: (v: Value) => void }) {
  const [draft, setDraft] = useState(String(value));
  useEffect(() => setDraft(String(value)), [value]);
  const label = `Attribute ${spec.name}`;
  if (spec.type === 'checkbox') {
    return <input type="checkbox" aria-label={label} checked={value === true} disabled={disabled} onChange={(e) => onSet(e.target.checked)} />;
  }
  if (spec.type === 'select') {
    return (
      <select aria-label={label} value={String(value)} disabled={disabled} onChange={(e) => onSet(e.target.value)}>
        {(spec.values ?? []).map((v) => (
          <option key={String(v)} value={String(v)}>
            {String(v)}
          </option>
        ))}
      </select>
    );
  }
  const [min, max, step] = spec.type === 'number' ? (spec.values ?? []).map(Number) : [];
  const commit = () => {
    if (spec.type === 'number') {
      const n = Number(draft);
      if (draft.trim() !== '' && Number.isFinite(n)) onSet(n);
      else setDraft(String(value));
    } else onSet(draft);
  };
  return (
    <input
      type={spec.type === 'number' ? 'number' : 'text'}
      aria-label={label}
      value={draft}
      min={min}
      max={max}
      step={step ?? 'any'}
      disabled={disabled}
      onChange={(e) => setDraft(e.target.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === 'Enter') commit();
      }}
    />
  );
}
