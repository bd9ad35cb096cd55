import { Ajv } from 'ajv';
import { schemaMessage, type PluginRegistry, type StepCheckContext, type StepDataKind } from '../../plugins/plugin-registry.js';
import { PipelineDefinition, type PipelineStep } from './pipelines.schemas.js';

export interface Problem {
  path: (string | number)[];
  message: string;
}

/** What validation knows about the project a pipeline belongs to (null for a global pipeline checked on its own). */
export type ProjectFacts = NonNullable<StepCheckContext['project']>;

const checkShape = new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(PipelineDefinition);

/**
 * Checks a definition and names every problem with its path: its shape, unknown or unavailable step types, params
 * failing their step type's JSON Schema, duplicate ids, `needs` naming missing steps, cycles, inputs that no
 * upstream step produces, and each step type's own checks (models, classes and versions of the project, webhook URLs).
 */
export function validateDefinition(value: unknown, registry: PluginRegistry, project: ProjectFacts | null): Problem[] {
  const problems = shapeProblems(value);
  const steps = (value as { steps?: unknown })?.steps;
  if (!Array.isArray(steps)) return problems;
  const { ids, usable } = checkSteps(steps, registry, problems);
  const needsOf = resolveNeeds(steps, ids, problems);
  const order = topologicalOrder(steps.length, needsOf);
  if (order.length < steps.length) {
    const cycle = findCycle(steps.length, needsOf);
    if (cycle) {
      const names = cycle.map((i) => (steps[i] as PipelineStep).id);
      problems.push({ path: ['steps', cycle[0], 'needs'], message: `cycle: ${[...names, names[0]].join(' → ')}` });
    }
    return problems;
  }
  checkDataFlow(order, needsOf, new Map(usable.map((u) => [u.index, u.step])), registry, project, problems);
  return problems;
}

/** The definition's shape against the PipelineDefinition schema (a step's params are checked against its own schema). */
function shapeProblems(value: unknown): Problem[] {
  const problems: Problem[] = [];
  if (checkShape(value)) return problems;
  for (const e of checkShape.errors ?? []) {
    const path: (string | number)[] = e.instancePath.split('/').filter(Boolean).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
    if (e.keyword === 'required') path.push(String(e.params.missingProperty));
    if (e.keyword === 'additionalProperties') path.push(String(e.params.additionalProperty));
    // A step's params are reported against its own schema below.
    if (path[0] === 'steps' && path[2] === 'params') continue;
    const message = e.keyword === 'required'
      ? 'required'
      : e.keyword === 'additionalProperties'
        ? 'unknown field'
        : e.keyword === 'minItems' && path.join('.') === 'steps' ? 'a pipeline needs at least one step' : schemaMessage(e);
    if (!problems.some((p) => p.path.join('.') === path.join('.') && p.message === message)) problems.push({ path, message });
  }
  return problems;
}

/** Each step's id (duplicates), type (unknown, unavailable) and params; the steps whose type is installed are usable. */
function checkSteps(steps: unknown[], registry: PluginRegistry, problems: Problem[]): { ids: Map<string, number>; usable: { step: PipelineStep; index: number }[] } {
  const ids = new Map<string, number>();
  const usable: { step: PipelineStep; index: number }[] = [];
  steps.forEach((raw, index) => {
    if (!raw || typeof raw !== 'object') return;
    const step = raw as PipelineStep;
    if (typeof step.id === 'string') {
      if (ids.has(step.id)) problems.push({ path: ['steps', index, 'id'], message: `duplicate step id '${step.id}' (also steps[${ids.get(step.id)}])` });
      else ids.set(step.id, index);
    }
    if (typeof step.type !== 'string') return;
    const plugin = registry.get('pipeline_step', step.type);
    if (!plugin?.step) {
      const known = registry.list('pipeline_step').map((p) => p.name).join(', ');
      problems.push({ path: ['steps', index, 'type'], message: `unknown step type '${step.type}' (known: ${known})` });
      return;
    }
    const reason = plugin.step.unavailable?.() ?? null;
    if (reason) problems.push({ path: ['steps', index, 'type'], message: `step type '${step.type}' is unavailable: ${reason}` });
    for (const issue of registry.check('pipeline_step', step.type, step.params ?? {})) {
      problems.push({ path: ['steps', index, 'params', ...issue.path], message: issue.message });
    }
    usable.push({ step, index });
  });
  return { ids, usable };
}

/** Each step's `needs` as step indices; names of no step, and a step needing itself, are problems. */
function resolveNeeds(steps: unknown[], ids: Map<string, number>, problems: Problem[]): Map<number, number[]> {
  const needsOf = new Map<number, number[]>();
  steps.forEach((raw, index) => {
    const needs = (raw as PipelineStep | null)?.needs;
    if (!Array.isArray(needs)) return;
    const resolved: number[] = [];
    needs.forEach((name, j) => {
      if (typeof name !== 'string') return;
      const target = ids.get(name);
      if (target === undefined) problems.push({ path: ['steps', index, 'needs', j], message: `names no step '${name}'` });
      else if (target === index) problems.push({ path: ['steps', index, 'needs', j], message: 'a step cannot need itself' });
      else resolved.push(target);
    });
    needsOf.set(index, resolved);
  });
  return needsOf;
}

/**
 * Data flow: a step receives every kind its ancestors produce; each input it needs must be among them. Each step
 * type's own checks run with the classes the detectors upstream produce (null: unknown).
 */
function checkDataFlow(
  order: number[],
  needsOf: Map<number, number[]>,
  usable: Map<number, PipelineStep>,
  registry: PluginRegistry,
  project: ProjectFacts | null,
  problems: Problem[],
): void {
  const available = new Map<number, Set<StepDataKind>>();
  const classes = new Map<number, Set<string> | null>();
  for (const index of order) {
    const { kinds, upstream, anyDetector } = upstreamOf(needsOf.get(index) ?? [], usable, available, classes, registry);
    available.set(index, kinds);
    const step = usable.get(index);
    if (!step) {
      classes.set(index, null);
      continue;
    }
    const impl = registry.get('pipeline_step', step.type)!.step!;
    for (const kind of impl.inputs) {
      if (!kinds.has(kind)) {
        const given = kinds.size ? [...kinds].join(', ') : 'nothing';
        problems.push({
          path: ['steps', index, (step.needs?.length ?? 0) > 0 ? 'needs' : 'type'],
          message: `step '${step.id}' (${step.type}) takes ${kind}, which the steps it needs do not produce (they give ${given})`,
        });
      }
    }
    const context: StepCheckContext = { project, upstreamClasses: anyDetector ? upstream : null };
    for (const issue of impl.check?.(step.params ?? {}, context) ?? []) {
      problems.push({ path: ['steps', index, 'params', ...issue.path], message: issue.message });
    }
    const produced = impl.producesClasses?.(step.params ?? {}, context);
    classes.set(index, produced === undefined ? upstream : produced);
  }
}

/** What a step's needs hand it: the data kinds, and the classes upstream (null: unknown; anyDetector: some named). */
function upstreamOf(
  needs: number[],
  usable: Map<number, PipelineStep>,
  available: Map<number, Set<StepDataKind>>,
  classes: Map<number, Set<string> | null>,
  registry: PluginRegistry,
): { kinds: Set<StepDataKind>; upstream: Set<string> | null; anyDetector: boolean } {
  const kinds = new Set<StepDataKind>();
  let upstream: Set<string> | null = new Set();
  let anyDetector = false;
  for (const need of needs) {
    for (const k of available.get(need) ?? []) kinds.add(k);
    const impl = usable.get(need) && registry.get('pipeline_step', usable.get(need)!.type)?.step;
    for (const k of impl?.outputs ?? []) kinds.add(k);
    const c = classes.get(need);
    if (c === null) upstream = null;
    else if (c && upstream) {
      if (c.size > 0) anyDetector = true;
      for (const name of c) upstream.add(name);
    }
  }
  return { kinds, upstream, anyDetector };
}

/** Step indices in an order where every step comes after the steps it needs; shorter than n when there is a cycle. */
export function topologicalOrder(n: number, needsOf: Map<number, number[]>): number[] {
  const indegree = new Array<number>(n).fill(0);
  const dependants = new Map<number, number[]>();
  for (const [index, needs] of needsOf) {
    for (const need of new Set(needs)) {
      indegree[index]++;
      dependants.set(need, [...(dependants.get(need) ?? []), index]);
    }
  }
  const ready = indegree.flatMap((d, i) => (d === 0 ? [i] : []));
  const order: number[] = [];
  while (ready.length > 0) {
    const i = ready.shift()!;
    order.push(i);
    for (const d of dependants.get(i) ?? []) if (--indegree[d] === 0) ready.push(d);
  }
  return order;
}

function findCycle(n: number, needsOf: Map<number, number[]>): number[] | null {
  const state = new Array<number>(n).fill(0);
  const stack: number[] = [];
  const visit = (i: number): number[] | null => {
    state[i] = 1;
    stack.push(i);
    for (const next of needsOf.get(i) ?? []) {
      if (state[next] === 1) return stack.slice(stack.indexOf(next)).reverse();
      if (state[next] === 0) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state[i] = 2;
    return null;
  };
  for (let i = 0; i < n; i++) {
    if (state[i] === 0) {
      const found = visit(i);
      if (found) return found;
    }
  }
  return null;
}
