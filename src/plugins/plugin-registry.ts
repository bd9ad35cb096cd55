import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

/** Everything that can be plugged into Versa, each kind with its own catalog entry. */
export const PLUGIN_TYPES = [
  'importer',
  'exporter',
  'preprocessing',
  'augmentation',
  'quality_check',
  'cleaning_action',
  'detector',
  'training_adapter',
  'pipeline_step',
] as const;
export type PluginType = (typeof PLUGIN_TYPES)[number];

/** A JSON Schema document (TypeBox schemas are plain JSON Schema objects). */
export type JsonSchema = Record<string, unknown>;

/** What flows between pipeline steps; a step declares which of these it needs and which it adds. */
export const STEP_DATA_KINDS = ['images', 'detections', 'violations', 'annotations', 'reviews', 'report', 'version', 'export', 'model'] as const;
export type StepDataKind = (typeof STEP_DATA_KINDS)[number];

export interface Detection {
  class_name: string;
  confidence: number;
  /** Original-image pixels, origin top-left. */
  box: { x: number; y: number; width: number; height: number };
  polygon?: [number, number][];
  /** What produced it, as an annotation `source` (`model:<id>`, `sam`). */
  source?: string;
}

/** The data a step sees: every kind its ancestors produced, keyed by kind. */
export interface StepData {
  images?: number[];
  /** Detections per image id. */
  detections?: Map<number, Detection[]>;
  /** Rule violations per image id. */
  violations?: Map<number, { subject: Detection; missing: string[] }[]>;
  [kind: string]: unknown;
}

export interface StepRunContext {
  readonly runId: number;
  readonly stepId: string;
  readonly projectId: number;
  readonly versionId: number | null;
  /** Who started the run: permissions were checked for them; writes name them. */
  readonly userId: number | null;
  readonly signal: AbortSignal;
  /** Progress of this step in [0, 1]. */
  progress(fraction: number): void;
}

export interface StepResult {
  /** Data for later steps (merged over what the step received). */
  data?: Partial<StepData>;
  /** What the run record shows for this step: counts and small outputs, JSON-serialisable. */
  outputs: Record<string, unknown>;
}

/** How a pipeline step plugin runs. */
export interface StepImplementation {
  readonly inputs: readonly StepDataKind[];
  readonly outputs: readonly StepDataKind[];
  /** Whether the step writes to the project (then only project admins may run the pipeline). */
  readonly writes: boolean;
  /** Null when the step can run here; otherwise why not (e.g. the service it calls is not installed). */
  unavailable?(): string | null;
  /** Checks beyond the schema (models, classes, versions of the project, allowlists); paths are inside `params`. */
  check?(params: Record<string, unknown>, context: StepCheckContext): SchemaIssue[];
  /** The class names of detections after this step (detectors, filters); undefined passes the upstream set on. */
  producesClasses?(params: Record<string, unknown>, context: StepCheckContext): Set<string> | null | undefined;
  execute(context: StepRunContext, params: Record<string, unknown>, input: StepData): Promise<StepResult>;
}

/** What a step type's check sees besides its params. */
export interface StepCheckContext {
  /** The project the pipeline belongs to or runs on; null for a global pipeline checked on its own. */
  project: {
    models: { id: number; name: string; task: string; lifecycle?: string; class_names: string[] }[];
    classes: { id: number; name: string }[];
    versionIds: number[];
  } | null;
  /** Class names the detectors upstream of this step can produce (null when unknown). */
  upstreamClasses: Set<string> | null;
}

export interface Plugin {
  readonly type: PluginType;
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly version: string;
  readonly builtin: boolean;
  /** JSON Schema of the plugin's parameters: validates them and documents them. */
  readonly config_schema: JsonSchema;
  /** Pipeline steps only. */
  readonly step?: StepImplementation;
  /** Where a third-party plugin was loaded from. */
  readonly source?: string;
}

/** A third-party plugin that could not be loaded; listed beside the plugins with its error. */
export interface PluginFailure {
  readonly source: string;
  readonly type: string | null;
  readonly name: string | null;
  readonly version: string | null;
  readonly error: string;
}

export interface SchemaIssue {
  /** JSON pointer-like path inside the validated value, as segments. */
  path: (string | number)[];
  message: string;
}

/**
 * The one catalog of everything pluggable, filled at start-up (built-in catalogs, then PLUGINS_DIR). Each plugin's
 * parameters have a JSON Schema; the same compiled schema validates a pipeline step's `params`.
 */
export class PluginRegistry {
  private readonly plugins = new Map<string, Plugin>();
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly failed: PluginFailure[] = [];
  private readonly ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });

  /** Adds a plugin; throws on a duplicate type/name or a schema that is not valid JSON Schema. */
  register(plugin: Plugin): void {
    if (!(PLUGIN_TYPES as readonly string[]).includes(plugin.type)) throw new Error(`unknown plugin type "${plugin.type}"`);
    const key = keyOf(plugin.type, plugin.name);
    if (this.plugins.has(key)) throw new Error(`a ${plugin.type} plugin named "${plugin.name}" is already registered`);
    if (plugin.type === 'pipeline_step' && !plugin.step) throw new Error(`pipeline step "${plugin.name}" has no executor`);
    let validate: ValidateFunction;
    try {
      validate = this.ajv.compile(plugin.config_schema);
    } catch (err) {
      throw new Error(`its schema is not valid JSON Schema: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.plugins.set(key, plugin);
    this.validators.set(key, validate);
  }

  reportFailure(failure: PluginFailure): void {
    this.failed.push(failure);
  }

  list(type?: PluginType): Plugin[] {
    return [...this.plugins.values()].filter((p) => type === undefined || p.type === type);
  }

  get(type: PluginType, name: string): Plugin | undefined {
    return this.plugins.get(keyOf(type, name));
  }

  failures(type?: string): PluginFailure[] {
    return this.failed.filter((f) => type === undefined || f.type === type);
  }

  /** Checks parameters against the plugin's schema; an empty list when they pass. */
  check(type: PluginType, name: string, params: unknown): SchemaIssue[] {
    const validate = this.validators.get(keyOf(type, name));
    if (!validate) return [{ path: [], message: `unknown ${type} "${name}"` }];
    if (validate(params)) return [];
    return issuesOf(validate.errors ?? []);
  }
}

function keyOf(type: string, name: string): string {
  return `${type}\u0000${name}`;
}

/** Ajv's message, with the allowed values where a value is not one of them (Ajv says only "the allowed values"). */
export function schemaMessage(e: ErrorObject): string {
  // As the HTTP layer's 422 words it: strings bare, others as JSON.
  if (e.keyword === 'enum') return `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`;
  return e.message ?? 'invalid value';
}

function issuesOf(errors: ErrorObject[]): SchemaIssue[] {
  const seen = new Set<string>();
  const out: SchemaIssue[] = [];
  for (const e of errors) {
    const path: (string | number)[] = e.instancePath.split('/').filter(Boolean).map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')));
    if (e.keyword === 'required') path.push(String(e.params.missingProperty));
    if (e.keyword === 'additionalProperties') path.push(String(e.params.additionalProperty));
    const message = e.keyword === 'required' ? 'required' : e.keyword === 'additionalProperties' ? 'unknown parameter' : schemaMessage(e);
    const key = `${path.join('.')}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, message });
  }
  return out;
}
