import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { PipelineRunsTable, PipelinesTable } from '../../db/schema.js';
import { Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { STEP_DATA_KINDS } from '../../plugins/plugin-registry.js';

export type PipelineRow = Selectable<PipelinesTable>;
export type PipelineRunRow = Selectable<PipelineRunsTable>;

/** Limits on what a definition may hold: steps, needs per step, and the YAML or JSON text it comes in. */
export const LIMITS = { steps: 200, needs: 50, textBytes: 256 * 1024, aliases: 100 } as const;

export const STEP_ID_PATTERN = '^[A-Za-z_][A-Za-z0-9_-]{0,63}$';

export const PipelineStep = Type.Object(
  {
    id: Type.String({ pattern: STEP_ID_PATTERN, description: 'Unique within the pipeline; other steps name it in `needs`' }),
    type: Type.String({ minLength: 1, maxLength: 100, description: 'A step type from GET /api/pipelines/step-types' }),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "Checked against the step type's params_schema" })),
    needs: Type.Optional(Type.Array(Type.String({ pattern: STEP_ID_PATTERN }), { maxItems: LIMITS.needs, description: 'Steps that run before this one and whose data it receives' })),
  },
  { additionalProperties: false },
);
export type PipelineStep = Static<typeof PipelineStep>;

export const PipelineDefinition = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    steps: Type.Array(PipelineStep, { minItems: 1, maxItems: LIMITS.steps }),
  },
  { additionalProperties: false, description: 'A DAG of steps: each step runs after the steps it `needs` and receives their data' },
);
export type PipelineDefinition = Static<typeof PipelineDefinition>;

/** Bodies that carry a definition are checked by the pipeline validator (every problem with its path), not by the route. */
const AnyDefinition = Type.Record(Type.String(), Type.Unknown(), {
  description: 'A pipeline definition `{name, description?, steps: [{id, type, params?, needs?}]}`',
});

export const PipelineCreate = Type.Object(
  {
    project_id: Type.Optional(Nullable(Id)),
    org_id: Type.Optional(Nullable(Id)),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "Defaults to the definition's name" })),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    definition: Type.Optional(Type.Union([AnyDefinition, Type.Null()], { description: 'Absent, null or `{}`: the protective-equipment example (an empty `steps` list is 422)' })),
  },
  {
    additionalProperties: false,
    description: "The owner is the project (`project_id`, its admins create it) or the organization (`org_id`, its owners and admins); neither: a pipeline only its creator sees",
  },
);
export type PipelineCreate = Static<typeof PipelineCreate>;

export const PipelineUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    definition: Type.Optional(AnyDefinition),
    yaml: Type.Optional(Type.String({ maxLength: LIMITS.textBytes, description: 'The definition as YAML text (kept with its comments)' })),
  },
  { additionalProperties: false, description: 'At most one of `definition` and `yaml`' },
);
export type PipelineUpdate = Static<typeof PipelineUpdate>;

export const PipelineOut = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  project_id: Nullable(Type.Integer({ description: 'The project that owns it and that it runs on' })),
  org_id: Nullable(Type.Integer({ description: "The organization that owns it: its members see it and run it on the organization's projects" })),
  definition: PipelineDefinition,
  writes_data: Type.Boolean({ description: 'Whether a step writes to the project (only project admins run it)' }),
  created_by: Nullable(Type.Integer()),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type PipelineOut = Static<typeof PipelineOut>;

export const PipelineListQuery = Type.Object({ project_id: Type.Optional(Id), org_id: Type.Optional(Id) });

export const ProblemOut = Type.Object({
  path: Type.String({ description: 'Where, e.g. `steps[1].params.model_id`' }),
  message: Type.String(),
  line: Type.Optional(Type.Integer({ description: 'Line in the YAML text (1-based), when validated from YAML' })),
  column: Type.Optional(Type.Integer({ description: 'Column in the YAML text (1-based)' })),
});
export type ProblemOut = Static<typeof ProblemOut>;

export const ValidationOut = Type.Object({ valid: Type.Boolean(), errors: Type.Array(ProblemOut) });
export type ValidationOut = Static<typeof ValidationOut>;

export const ValidateQuery = Type.Object({
  project_id: Type.Optional(Id),
  org_id: Type.Optional(Id),
});

/** 422 of the pipeline routes: FastAPI's issue list, each issue also with its definition path (and YAML line). */
export const PipelineProblemsOut = Type.Object({
  detail: Type.Union([
    Type.String(),
    Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
        msg: Type.String(),
        type: Type.String(),
        path: Type.Optional(Type.String()),
        line: Type.Optional(Type.Integer()),
        column: Type.Optional(Type.Integer()),
      }),
    ),
  ]),
});

export const StepTypeOut = Type.Object({
  type: Type.String(),
  title: Type.String(),
  description: Type.String(),
  params_schema: Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of `params`' }),
  inputs: Type.Array(StringEnum(STEP_DATA_KINDS)),
  outputs: Type.Array(StringEnum(STEP_DATA_KINDS)),
  writes: Type.Boolean({ description: 'Writes to the project' }),
  builtin: Type.Boolean(),
  available: Type.Boolean(),
  reason: Nullable(Type.String({ description: 'Why the step cannot run here' })),
});
export type StepTypeOut = Static<typeof StepTypeOut>;

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export const STEP_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'skipped', 'cancelled'] as const;

export const StepRunOut = Type.Object({
  id: Type.String(),
  type: Type.String(),
  status: StringEnum(STEP_STATUSES),
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
  duration_ms: Nullable(Type.Number()),
  progress: Type.Number(),
  outputs: Type.Record(Type.String(), Type.Unknown(), { description: 'Counts and small results of the step' }),
  error: Nullable(Type.String()),
});
export type StepRunOut = Static<typeof StepRunOut>;

export const PipelineRunOut = Type.Object({
  id: Type.Integer(),
  pipeline_id: Type.Integer(),
  project_id: Type.Integer(),
  version_id: Nullable(Type.Integer()),
  status: StringEnum(RUN_STATUSES),
  progress: Type.Number({ description: 'In [0, 1]' }),
  eta_seconds: Nullable(Type.Number()),
  job_id: Nullable(Type.Integer()),
  waiting_for: Nullable(Type.String({ description: 'While queued: what the run waits for, in words (the jobs ahead of it, or a worker to take it); null once started' })),
  /** The definition as it was when the run started: later edits of the pipeline do not change it. */
  definition: PipelineDefinition,
  steps: Type.Array(StepRunOut),
  outputs: Type.Record(Type.String(), Type.Unknown(), { description: "Each step's outputs by step id; `report` when a report step ran" }),
  error: Nullable(Type.String()),
  writes: Type.Record(Type.String(), Type.Integer(), { description: 'Records this run wrote, by kind (annotation, review, version, export)' }),
  created_by: Nullable(Type.Integer()),
  created_at: Timestamp,
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
});
export type PipelineRunOut = Static<typeof PipelineRunOut>;

export const RunRequest = Type.Object(
  {
    project_id: Type.Optional(Id),
    version_id: Type.Optional(Nullable(Id)),
  },
  { additionalProperties: false, description: "project_id defaults to the pipeline's project; an organization's pipeline runs on one of the organization's projects, given here" },
);
export type RunRequest = Static<typeof RunRequest>;

export const RunsQuery = PageQuery;
