import { Ajv, type ValidateFunction } from 'ajv';
import { Type, type Static, type TSchema } from 'typebox';

/**
 * The trainer protocol: what a trainer (trainer/versa_*.py) prints on stdout, one JSON object per line. This file is
 * its one definition; trainer/versa_trainer/contract.json is generated from it (scripts/trainer-contract.ts) and the
 * Python side validates every event it emits against that copy (trainer/versa_trainer/protocol.py), as the server
 * validates every event it reads. Bump the version with any change that an older trainer or server would misread.
 */
export const TRAINER_PROTOCOL = 2;

const Protocol = Type.Literal(TRAINER_PROTOCOL);
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Dict = Type.Record(Type.String(), Type.Unknown());
const Metric = Nullable(Type.Number());
const Eta = Nullable(Type.Number({ minimum: 0 }));
const Progress = Type.Number({ minimum: 0, maximum: 1 });
const strict = { additionalProperties: false } as const;

export const TRAINER_EVENTS = {
  /** The run began: the effective parameters, the environment, what initial weights were loaded. */
  started: Type.Object({
    event: Type.Literal('started'),
    protocol: Protocol,
    adapter: Type.String({ minLength: 1 }),
    params: Dict,
    env: Dict,
    init: Type.Optional(Nullable(Dict)),
    command: Type.Optional(Type.Array(Type.String())),
  }, strict),
  /** Work between epochs (loading, evaluating, exporting). */
  progress: Type.Object({
    event: Type.Literal('progress'),
    protocol: Protocol,
    progress: Progress,
    eta_seconds: Type.Optional(Eta),
    message: Type.Optional(Type.String()),
    epoch: Type.Optional(Type.Integer({ minimum: 1 })),
  }, strict),
  /** An epoch ended: its row of the history (losses, metrics, `lr`, `time`: any name, numbers or null). */
  epoch: Type.Object({
    event: Type.Literal('epoch'),
    protocol: Protocol,
    epoch: Type.Integer({ minimum: 1 }),
    epochs: Type.Integer({ minimum: 1 }),
    progress: Progress,
    eta_seconds: Eta,
  }, { additionalProperties: Metric }),
  /** The final model's evaluation. */
  metrics: Type.Object({
    event: Type.Literal('metrics'),
    protocol: Protocol,
    task: Type.String({ minLength: 1 }),
    metrics: Type.Record(Type.String(), Metric),
    per_class: Type.Array(Dict),
    confusion: Type.Optional(Nullable(Type.Array(Type.Array(Type.Integer())))),
    best_epoch: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    class_names: Type.Optional(Type.Array(Type.String())),
    evaluation: Type.Optional(Nullable(Dict)),
    history: Type.Optional(Type.Array(Dict)),
    parameters: Type.Optional(Type.Integer({ minimum: 0 })),
  }, strict),
  /** A file the run wrote, by its role (`onnx`, `pt`, `model`, `results`, `args`, `evaluation`), relative to the run folder. */
  artifact: Type.Object({
    event: Type.Literal('artifact'),
    protocol: Protocol,
    name: Type.String({ pattern: '^[a-z][a-z0-9_]*$' }),
    path: Type.String({ minLength: 1, pattern: '^(?!/)(?!.*(^|/)\\.\\.(/|$)).+$' }),
  }, strict),
  /** The run ended well: after `metrics` and every `artifact`. */
  finished: Type.Object({
    event: Type.Literal('finished'),
    protocol: Protocol,
    params: Dict,
    duration_s: Type.Number({ minimum: 0 }),
    env: Dict,
  }, strict),
  /** The run failed, in words. */
  failed: Type.Object({
    event: Type.Literal('failed'),
    protocol: Protocol,
    message: Type.String(),
  }, strict),
};

export type TrainerEventName = keyof typeof TRAINER_EVENTS;
export type TrainerEvent = { [K in TrainerEventName]: Static<(typeof TRAINER_EVENTS)[K]> }[TrainerEventName];
export type TrainerEventOf<K extends TrainerEventName> = Static<(typeof TRAINER_EVENTS)[K]>;
export type EpochEvent = TrainerEventOf<'epoch'> & Record<string, number | null>;

/** A line that claims to be an event (a JSON object with an `event` member) but breaks the protocol. */
export class TrainerProtocolError extends Error {}

const ajv = new Ajv({ allErrors: false, strict: false });
const validators = new Map<string, ValidateFunction>(Object.entries(TRAINER_EVENTS).map(([name, schema]) => [name, ajv.compile(schema)]));

/**
 * The event on a stdout line, validated; null for a line that is no event (libraries print too). Throws
 * TrainerProtocolError for an event of another protocol version, an unknown event or a malformed one.
 */
export function parseTrainerLine(line: string): TrainerEvent | null {
  if (!line.startsWith('{')) return null;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object' || typeof (value as { event?: unknown }).event !== 'string') return null;
  const { event, protocol } = value as { event: string; protocol?: unknown };
  if (protocol !== TRAINER_PROTOCOL) throw new TrainerProtocolError(`the trainer speaks protocol ${JSON.stringify(protocol ?? null)}, Versa expects ${TRAINER_PROTOCOL}`);
  const validate = validators.get(event);
  if (!validate) throw new TrainerProtocolError(`the trainer sent an unknown event '${event}'`);
  if (!validate(value)) {
    const error = validate.errors?.[0];
    throw new TrainerProtocolError(`the trainer's '${event}' event is malformed: ${error?.instancePath || '/'} ${error?.message ?? 'is invalid'}`);
  }
  return value as TrainerEvent;
}
