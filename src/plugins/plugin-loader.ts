import { readdir, realpath, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PLUGIN_TYPES, STEP_DATA_KINDS, type Plugin, type PluginRegistry, type StepDataKind, type StepImplementation } from './plugin-registry.js';

const MODULE_FILE = /\.(mjs|js)$/;
const NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const SEMVER = /^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$/;

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Loads the operator's third-party plugins once at start-up: every `*.mjs`/`*.js` file directly in `dir`, and every
 * sub-folder's `index.mjs`/`index.js`. A module exports one declaration (default export or `plugin`) or a list
 * (`plugins`). A plugin that fails to import or declares itself wrongly is recorded with its error (listed by
 * GET /api/plugins) and the server starts anyway. Recorded errors name paths relative to the plugin folder; the log
 * keeps them whole.
 */
export async function loadPluginDirectory(registry: PluginRegistry, dir: string | null, log: Log): Promise<void> {
  if (!dir) return;
  const roots = [resolve(dir), await realpath(dir).catch(() => resolve(dir))];
  const message = (err: unknown) => relativeToPluginFolder(err instanceof Error ? err.message : String(err), roots);
  let entries: string[];
  try {
    entries = (await readdir(dir)).sort();
  } catch (err) {
    registry.reportFailure({ source: 'PLUGINS_DIR', type: null, name: null, version: null, error: `PLUGINS_DIR cannot be read: ${message(err)}` });
    log.warn({ dir, err }, 'PLUGINS_DIR cannot be read');
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry);
    const file = await moduleFile(path);
    if (!file) continue;
    let declarations: unknown[];
    try {
      const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      declarations = Array.isArray(mod.plugins) ? mod.plugins : [mod.default ?? mod.plugin];
    } catch (err) {
      registry.reportFailure({ source: entry, type: null, name: null, version: null, error: `import failed: ${message(err)}` });
      log.warn({ plugin: entry, err }, 'plugin failed to load');
      continue;
    }
    for (const declaration of declarations) {
      const d = (declaration ?? {}) as Record<string, unknown>;
      const identity = { source: entry, type: str(d.type), name: str(d.name), version: str(d.version) };
      try {
        registry.register(toPlugin(d, entry));
        log.info({ plugin: entry, type: d.type, name: d.name }, 'plugin loaded');
      } catch (err) {
        registry.reportFailure({ ...identity, error: message(err) });
        log.warn({ plugin: entry, err: message(err) }, 'plugin refused');
      }
    }
  }
}

async function moduleFile(path: string): Promise<string | null> {
  const info = await stat(path).catch(() => null);
  if (!info) return null;
  if (info.isFile()) return MODULE_FILE.test(path) ? path : null;
  if (!info.isDirectory()) return null;
  for (const index of ['index.mjs', 'index.js']) {
    if ((await stat(join(path, index)).catch(() => null))?.isFile()) return join(path, index);
  }
  return null;
}

/** Checks a module's declaration and turns it into a registry entry. */
function toPlugin(d: Record<string, unknown>, source: string): Plugin {
  if (typeof d.type !== 'string' || !(PLUGIN_TYPES as readonly string[]).includes(d.type)) {
    throw new Error(`"type" must be one of ${PLUGIN_TYPES.join(', ')}`);
  }
  if (typeof d.name !== 'string' || !NAME.test(d.name)) throw new Error('"name" must be lower-case letters, digits, _ or - (at most 64)');
  if (typeof d.version !== 'string' || !SEMVER.test(d.version)) throw new Error('"version" must be a semantic version such as 1.0.0');
  const schema = d.schema ?? d.config_schema;
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) throw new Error('"schema" must be a JSON Schema object');
  let step: StepImplementation | undefined;
  if (d.type === 'pipeline_step') {
    if (typeof d.execute !== 'function') throw new Error('a pipeline_step plugin needs an execute(context) function');
    const inputs = kinds(d.inputs, 'inputs');
    const outputs = kinds(d.outputs, 'outputs');
    const execute = d.execute as (context: object) => unknown;
    step = {
      inputs,
      outputs,
      // Third-party steps get data, not Versa's services: they cannot write to the project.
      writes: false,
      async execute(context, params, input) {
        const result = await execute({
          params,
          project_id: context.projectId,
          run_id: context.runId,
          signal: context.signal,
          progress: (fraction: number) => context.progress(fraction),
          images: input.images ?? [],
          detections: Object.fromEntries(input.detections ?? []),
          violations: Object.fromEntries(input.violations ?? []),
        });
        const out = (result ?? {}) as { outputs?: Record<string, unknown>; images?: unknown };
        const data: Record<string, unknown> = {};
        if (Array.isArray(out.images) && out.images.every((i) => Number.isInteger(i))) data.images = out.images;
        return { data, outputs: JSON.parse(JSON.stringify(out.outputs ?? {})) as Record<string, unknown> };
      },
    };
  }
  return {
    type: d.type as Plugin['type'],
    name: d.name,
    title: typeof d.title === 'string' ? d.title : d.name,
    description: typeof d.description === 'string' ? d.description : '',
    version: d.version,
    builtin: false,
    config_schema: schema as Record<string, unknown>,
    step,
    source,
  };
}

function kinds(value: unknown, field: string): StepDataKind[] {
  const list = value ?? [];
  if (!Array.isArray(list) || !list.every((k) => (STEP_DATA_KINDS as readonly string[]).includes(k))) {
    throw new Error(`"${field}" must be a list of ${STEP_DATA_KINDS.join(', ')}`);
  }
  return list as StepDataKind[];
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);

/** An absolute path or file URL in an error's text, up to a space, quote, bracket or separator. */
const ABSOLUTE_PATH = /(?<![\w.:/])(?:file:\/\/)?\/[^\s'"`()<>,;]+/g;

/**
 * An error's text with paths inside the plugin folder (`roots`: the folder and its real path) made relative to it,
 * and any other absolute path cut to its last part: the server's layout is not shown, even to admins.
 */
export function relativeToPluginFolder(text: string, roots: readonly string[]): string {
  return text.replace(ABSOLUTE_PATH, (match) => {
    let path = match;
    if (path.startsWith('file://')) {
      try {
        path = decodeURI(path.slice('file://'.length));
      } catch {
        path = path.slice('file://'.length);
      }
    }
    for (const root of roots) {
      if (path === root) return '.';
      if (path.startsWith(`${root}/`)) return path.slice(root.length + 1);
    }
    return `…/${basename(path)}`;
  });
}
