/**
 * The catalogs of quality checks and cleaning actions: one registry per modality, so a modality (text, tabular, …)
 * adds its definitions with `registerChecks` / `registerCleaningActions` without touching the others. Parameters are
 * described once (type, default, range) and the same description validates requests and documents the catalog.
 */
import { ValidationError, type ValidationIssue } from '../../http/errors.js';
import type { ParamSpec, ParamSpecs } from '../../plugins/param-spec.js';
import type { Modality } from '../profile/profile.schemas.js';
import type { QualityItem, Severity } from './quality.schemas.js';

export type { ParamSpec, ParamSpecs } from '../../plugins/param-spec.js';
export type ParamValues = Record<string, any>;

/** Gathers a check's findings: counts all, keeps the affected image and sample ids and the worst (or first) 100 items. */
export class Findings {
  count = 0;
  readonly imageIds = new Set<number>();
  readonly sampleIds = new Set<number>();
  private kept: { item: Omit<QualityItem, 'detail'>; detail: () => string; score: number }[] = [];
  static readonly ITEMS = 100;
  static readonly IMAGE_IDS = 10_000;

  /** `score`: higher is worse; items without a score keep their order of arrival. */
  add(item: { image_id?: number; annotation_id?: number; sample_id?: number }, detail: () => string, score?: number): void {
    this.count++;
    if (item.image_id !== undefined && this.imageIds.size < Findings.IMAGE_IDS) this.imageIds.add(item.image_id);
    if (item.sample_id !== undefined && this.sampleIds.size < Findings.IMAGE_IDS) this.sampleIds.add(item.sample_id);
    if (score === undefined) {
      if (this.kept.length < Findings.ITEMS) this.kept.push({ item, detail, score: -this.count });
      return;
    }
    this.kept.push({ item: { ...item, score: round(score) }, detail, score });
    if (this.kept.length >= Findings.ITEMS * 4) this.trim();
  }

  items(): QualityItem[] {
    this.trim();
    return this.kept.map((k) => ({ ...k.item, detail: k.detail() }));
  }

  private trim(): void {
    this.kept.sort((a, b) => b.score - a.score);
    this.kept.length = Math.min(this.kept.length, Findings.ITEMS);
  }
}

const round = (v: number) => Math.round(v * 1000) / 1000;

export interface CatalogEntry {
  id: string;
  title: string;
  modality: Modality;
  description: string;
  params: ParamSpecs;
}

export interface CheckDefinition<Context = unknown> extends CatalogEntry {
  severity: Severity;
  /** Set for checks that need something the project may lack (e.g. `detector`). */
  requires?: string;
  /** The one-line summary shown beside the count. */
  message(count: number, params: ParamValues): string;
  run(context: Context, params: ParamValues, findings: Findings): void | Promise<void>;
}

const checks = new Map<Modality, Map<string, CheckDefinition<any>>>();

export function registerChecks(modality: Modality, definitions: readonly CheckDefinition<any>[]): void {
  const entries = checks.get(modality) ?? new Map();
  for (const d of definitions) entries.set(d.id, d);
  checks.set(modality, entries);
}

export function checksOf(modality?: Modality): CheckDefinition<any>[] {
  if (modality) return [...(checks.get(modality)?.values() ?? [])];
  return [...checks.values()].flatMap((m) => [...m.values()]);
}

/** The catalog as the API shows it. */
export function checkCatalog(modality?: Modality) {
  return checksOf(modality).map((c) => ({
    id: c.id,
    title: c.title,
    modality: c.modality,
    severity: c.severity,
    description: c.description,
    params: c.params,
    ...(c.requires ? { requires: c.requires } : {}),
  }));
}

/** Unknown ids → 422 naming the valid ones. */
export function assertKnownIds(ids: readonly string[], known: readonly string[], loc: (string | number)[], what: string): void {
  const issues: ValidationIssue[] = [];
  ids.forEach((id, i) => {
    if (!known.includes(id)) issues.push({ loc: [...loc, i], msg: `Unknown ${what} "${id}"; valid: ${known.join(', ')}`, type: 'value_error' });
  });
  if (issues.length) throw new ValidationError(issues);
}

/** The given params over the defaults; unknown names, wrong types and values out of range → 422 at `loc`. */
export function resolveParams(specs: ParamSpecs, given: Record<string, unknown> | undefined, loc: (string | number)[]): ParamValues {
  const out: ParamValues = {};
  const issues: ValidationIssue[] = [];
  for (const [name, spec] of Object.entries(specs)) out[name] = spec.default;
  for (const [name, value] of Object.entries(given ?? {})) {
    const spec = specs[name];
    const at = [...loc, name];
    if (!spec) {
      const known = Object.keys(specs);
      issues.push({ loc: at, msg: `Unknown parameter "${name}"${known.length ? `; valid: ${known.join(', ')}` : ' (this entry takes none)'}`, type: 'value_error' });
      continue;
    }
    const problem = paramProblem(spec, value);
    if (problem) issues.push({ loc: at, msg: problem, type: 'value_error' });
    else out[name] = value;
  }
  if (issues.length) throw new ValidationError(issues);
  return out;
}

function paramProblem(spec: ParamSpec, value: unknown): string | null {
  const range = (v: number) =>
    (spec.min !== undefined && v < spec.min) || (spec.max !== undefined && v > spec.max) ? `must be between ${spec.min ?? '-∞'} and ${spec.max ?? '∞'}, got ${v}` : null;
  switch (spec.type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) ? range(value) : 'must be an integer';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? range(value) : 'must be a number';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be a boolean';
    case 'string':
      if (typeof value !== 'string' || value.length > (spec.max ?? 255)) return `must be a string of at most ${spec.max ?? 255} characters`;
      return spec.enum && !spec.enum.includes(value) ? `must be one of ${spec.enum.join(', ')}` : null;
    case 'integer[]':
      if (!Array.isArray(value) || value.length > 1000 || !value.every((v) => Number.isInteger(v) && v >= 1 && v <= 2_147_483_647)) {
        return 'must be a list of at most 1,000 ids';
      }
      return null;
  }
}
