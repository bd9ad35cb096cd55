import type { LabelClass, Sample, SamplePatch } from '../../types.js';

/** What every per-modality view gets: the sample, the project's classes, and a way to save a change. */
export interface SampleViewProps {
  sample: Sample;
  classes: LabelClass[];
  readOnly: boolean;
  /** The project takes several classes per sample: picking a class toggles it (see pickedLabel). */
  multiLabel: boolean;
  save(patch: SamplePatch): void;
}

/** The class of a number key 1–9, or undefined. */
export const classOfKey = (classes: LabelClass[], key: string): LabelClass | undefined =>
  /^[1-9]$/.test(key) ? classes[Number(key) - 1] : undefined;

export const colorOf = (classes: LabelClass[], name: string) => classes.find((c) => c.name === name)?.color ?? '#888888';

/** Typing in a field must not trigger the page's shortcuts. */
export const isTyping = (e: KeyboardEvent) => {
  const target = e.target as HTMLElement | null;
  return !!target && ((target.tagName === 'INPUT' && (target as HTMLInputElement).type !== 'checkbox') || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT' || target.isContentEditable);
};

export function labelsOf(sample: Sample): string[] {
  return sample.label === null ? [] : Array.isArray(sample.label) ? sample.label : [sample.label];
}

/**
 * The sample's label once class `name` is picked: in a multi-label project the class is toggled in its set (one
 * left: that class; none: null); otherwise it replaces the class.
 */
export function pickedLabel(sample: Sample, name: string, multiLabel: boolean): Sample['label'] {
  if (!multiLabel) return name;
  const labels = labelsOf(sample);
  const next = labels.includes(name) ? labels.filter((l) => l !== name) : [...labels, name];
  return next.length === 0 ? null : next.length === 1 ? next[0] : next;
}
