/**
 * The rules a sample's content and labels obey, as pure functions shared by the create and update routes and by
 * every import: they return the row's stored fields, or throw a SampleRuleError saying what is wrong (the caller
 * turns it into a 422 naming the body member or the import line; `editedLabels`, for an edit of one sample, does so itself).
 */
import { ValidationError } from '../../http/errors.js';
import { textProblem } from '../../http/input-guard.js';
import type { Modality, SampleValue, TextSpan, TimeSegment } from './samples.schemas.js';

export class SampleRuleError extends Error {}

const MAX_TEXT = 1_000_000;
const MAX_CLASS_NAME = 200;
const MAX_SPANS = 10_000;
const LLM_FIELDS = ['prompt', 'response', 'chosen', 'rejected', 'messages'] as const;

/** What a row stores of a sample's labels, and the class names they use. */
export interface StoredLabels {
  label: string | null;
  labels: string | null;
  spans: string | null;
  value: string | null;
  labelled: number;
  classNames: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function className(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_CLASS_NAME) {
    throw new SampleRuleError(`${what} must be a class name (1 to ${MAX_CLASS_NAME} characters)`);
  }
  const problem = textProblem(value, true);
  if (problem) throw new SampleRuleError(`${what} ${problem}`);
  return value;
}

/** A string, a list of strings (multi-label) or null. */
export function normaliseLabel(value: unknown): string[] {
  if (value === null || value === undefined || value === '') return [];
  if (Array.isArray(value)) {
    if (value.length > 100) throw new SampleRuleError('label: at most 100 classes');
    return [...new Set(value.map((v, i) => className(v, `label[${i}]`)))];
  }
  return [className(value, 'label')];
}

/** True when `index` falls between the two halves of a UTF-16 surrogate pair. */
function cutsSurrogatePair(text: string, index: number): boolean {
  if (index <= 0 || index >= text.length) return false;
  const before = text.charCodeAt(index - 1);
  const after = text.charCodeAt(index);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}

/** Spans as `{start, end, label}` objects or `[start, end, label]` triples, checked against the text. */
export function normaliseTextSpans(value: unknown, text: string): TextSpan[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new SampleRuleError('spans must be a list');
  if (value.length > MAX_SPANS) throw new SampleRuleError(`spans: at most ${MAX_SPANS}`);
  return value.map((raw, i) => {
    const [start, end, label] = Array.isArray(raw) ? raw : isObject(raw) ? [raw.start, raw.end, raw.label] : [];
    if (!Number.isInteger(start) || !Number.isInteger(end)) throw new SampleRuleError(`spans[${i}]: start and end must be integers`);
    const s = start as number;
    const e = end as number;
    if (s < 0 || e <= s || e > text.length) {
      throw new SampleRuleError(`spans[${i}]: [${s}, ${e}) is not inside the text (0 ≤ start < end ≤ ${text.length})`);
    }
    if (cutsSurrogatePair(text, s) || cutsSurrogatePair(text, e)) throw new SampleRuleError(`spans[${i}]: [${s}, ${e}) cuts a surrogate pair`);
    return { start: s, end: e, label: className(label, `spans[${i}].label`) };
  });
}

/** Time segments `{start_s, end_s, label}` inside the clip (when its duration is known). */
export function normaliseSegments(value: unknown, durationS: number | null): TimeSegment[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new SampleRuleError('segments must be a list');
  if (value.length > MAX_SPANS) throw new SampleRuleError(`segments: at most ${MAX_SPANS}`);
  return value.map((raw, i) => {
    const [start, end, label] = Array.isArray(raw) ? raw : isObject(raw) ? [raw.start_s, raw.end_s, raw.label] : [];
    if (typeof start !== 'number' || typeof end !== 'number' || !Number.isFinite(start) || !Number.isFinite(end)) {
      throw new SampleRuleError(`segments[${i}]: start_s and end_s must be numbers`);
    }
    // A little slack: containers round their duration.
    if (start < 0 || end <= start || (durationS !== null && end > durationS + 0.05)) {
      throw new SampleRuleError(`segments[${i}]: [${start}, ${end}) s is not inside the clip${durationS !== null ? ` (0 to ${durationS} s)` : ''}`);
    }
    return { start_s: start, end_s: end, label: className(label, `segments[${i}].label`) };
  });
}

export function normaliseValue(modality: Modality, value: unknown): SampleValue {
  if (value === null || value === undefined) return null;
  if (modality === 'llm') {
    if (typeof value === 'number') value = { rating: value };
    if (!isObject(value)) throw new SampleRuleError('value of an LLM record must be {rating?, preference?}');
    const out: { rating?: number; preference?: 'chosen' | 'rejected' | 'tie' } = {};
    for (const key of Object.keys(value)) if (key !== 'rating' && key !== 'preference') throw new SampleRuleError(`value.${key} is not a field of an LLM value`);
    if (value.rating !== undefined) {
      if (!Number.isInteger(value.rating) || (value.rating as number) < 1 || (value.rating as number) > 10) throw new SampleRuleError('value.rating must be an integer from 1 to 10');
      out.rating = value.rating as number;
    }
    if (value.preference !== undefined) {
      if (!['chosen', 'rejected', 'tie'].includes(value.preference as string)) throw new SampleRuleError('value.preference must be chosen, rejected or tie');
      out.preference = value.preference as 'chosen' | 'rejected' | 'tie';
    }
    return out;
  }
  if (modality === 'audio' && typeof value === 'string') {
    if (value.length > 100_000) throw new SampleRuleError('value (transcript): at most 100,000 characters');
    return value;
  }
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  throw new SampleRuleError(modality === 'audio' ? 'value must be a transcript (string) or a number' : 'value must be a finite number');
}

/**
 * The stored labels after an edit: each of label, spans and value the edit names replaces the current one (the rest
 * stay), checked as `storedLabels` checks them; a broken rule is a 422 on the body. A sample's PATCH and a
 * quality-control task's save both edit this way.
 */
export function editedLabels(modality: Modality, data: Record<string, unknown>, current: { label: unknown; spans: unknown; value: unknown }, edit: { label?: unknown; spans?: unknown; value?: unknown }): StoredLabels {
  const next = {
    label: edit.label !== undefined ? edit.label : current.label,
    spans: edit.spans !== undefined ? edit.spans : current.spans,
    value: edit.value !== undefined ? edit.value : current.value,
  };
  try {
    return storedLabels(modality, data, next);
  } catch (err) {
    if (err instanceof SampleRuleError) throw ValidationError.at(['body'], err.message);
    throw err;
  }
}

/** Stored labels from the sample's label, spans and value, checked against its data. */
export function storedLabels(modality: Modality, data: Record<string, unknown>, input: { label?: unknown; spans?: unknown; value?: unknown }): StoredLabels {
  const names = normaliseLabel(input.label);
  let spans: (TextSpan | TimeSegment)[] = [];
  if (input.spans !== undefined && input.spans !== null) {
    if (modality === 'text') spans = normaliseTextSpans(input.spans, data.text as string);
    else if (modality === 'audio' || modality === 'video') spans = normaliseSegments(input.spans, typeof data.duration_s === 'number' ? data.duration_s : null);
    else throw new SampleRuleError(`${modality} samples have no spans`);
  }
  const value = normaliseValue(modality, input.value);
  const classNames = [...new Set([...names, ...spans.map((s) => s.label)])];
  return {
    label: names[0] ?? null,
    labels: names.length > 1 ? JSON.stringify(names) : null,
    spans: spans.length > 0 ? JSON.stringify(spans) : null,
    value: value === null ? null : JSON.stringify(value),
    labelled: names.length > 0 || spans.length > 0 || value !== null ? 1 : 0,
    classNames,
  };
}

/** The content of a text, tabular or LLM sample (media data comes from the stored file). */
export function normaliseData(modality: Modality, data: unknown): Record<string, unknown> {
  if (!isObject(data)) throw new SampleRuleError('data must be an object');
  if (modality === 'text') {
    if (typeof data.text !== 'string' || data.text.length === 0) throw new SampleRuleError('data.text must be a non-empty string');
    if (data.text.length > MAX_TEXT) throw new SampleRuleError(`data.text: at most ${MAX_TEXT} characters`);
    return { text: data.text };
  }
  if (modality === 'tabular') {
    if (!isObject(data.row)) throw new SampleRuleError('data.row must be an object of column values');
    const row: Record<string, unknown> = {};
    for (const [key, cell] of Object.entries(data.row)) {
      if (cell !== null && !['string', 'number', 'boolean'].includes(typeof cell)) throw new SampleRuleError(`data.row.${key} must be a string, number, boolean or null`);
      row[key] = cell;
    }
    return { row };
  }
  if (modality === 'llm') return normaliseLlm(data);
  throw new SampleRuleError(`${modality} samples are created by importing their files (import/jsonl)`);
}

export function normaliseLlm(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['prompt', 'response', 'chosen', 'rejected'] as const) {
    if (data[key] === undefined || data[key] === null) continue;
    if (typeof data[key] !== 'string') throw new SampleRuleError(`${key} must be a string`);
    if ((data[key] as string).length > MAX_TEXT) throw new SampleRuleError(`${key}: at most ${MAX_TEXT} characters`);
    out[key] = data[key];
  }
  if (data.messages !== undefined && data.messages !== null) {
    if (!Array.isArray(data.messages) || data.messages.length > 1000) throw new SampleRuleError('messages must be a list of at most 1000 {role, content}');
    out.messages = data.messages.map((m, i) => {
      if (!isObject(m) || typeof m.role !== 'string' || typeof m.content !== 'string') throw new SampleRuleError(`messages[${i}] must be {role, content} strings`);
      return { role: m.role, content: m.content };
    });
  }
  if (out.prompt === undefined && out.messages === undefined) throw new SampleRuleError(`an LLM record needs a prompt or messages (fields: ${LLM_FIELDS.join(', ')})`);
  if ((out.chosen === undefined) !== (out.rejected === undefined)) throw new SampleRuleError('a preference pair needs both chosen and rejected');
  return out;
}
