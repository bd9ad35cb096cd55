import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig, TRAINER_ENV_NAMES } from '../../src/config.js';
import { pythonPath } from '../../src/training/python.js';
import { runTrainer } from '../../src/training/trainer-process.js';
import { parseTrainerLine, TRAINER_PROTOCOL, TrainerProtocolError } from '../../src/training/trainer-protocol.js';

const P = TRAINER_PROTOCOL;

describe('trainer protocol, server side', () => {
  it('reads events and ignores what libraries print', () => {
    assert.equal(parseTrainerLine('Downloading nothing'), null);
    assert.equal(parseTrainerLine('{"loss": 1}'), null, 'a JSON object without `event` is no event');
    assert.equal(parseTrainerLine('{not json'), null);
    assert.deepEqual(parseTrainerLine(`{"event":"epoch","protocol":${P},"epoch":1,"epochs":2,"progress":0.5,"eta_seconds":null,"map50":0.25}`), {
      event: 'epoch', protocol: P, epoch: 1, epochs: 2, progress: 0.5, eta_seconds: null, map50: 0.25,
    });
  });

  it('refuses another version, an unknown event and a malformed one', () => {
    assert.throws(() => parseTrainerLine('{"event":"final","metrics":{}}'), (err: Error) => err instanceof TrainerProtocolError && /speaks protocol null, Versa expects 2/.test(err.message));
    assert.throws(() => parseTrainerLine(`{"event":"final","protocol":${P}}`), /unknown event 'final'/);
    assert.throws(() => parseTrainerLine(`{"event":"epoch","protocol":${P},"epoch":1,"epochs":2,"progress":0.5,"eta_seconds":null,"note":"x"}`), /'epoch' event is malformed: \/note/);
    assert.throws(() => parseTrainerLine(`{"event":"artifact","protocol":${P},"name":"onnx","path":"../../etc/passwd"}`), /'artifact' event is malformed: \/path/);
    assert.throws(() => parseTrainerLine(`{"event":"finished","protocol":${P},"params":{},"env":{}}`), /must have required property 'duration_s'/);
  });

  it("gives trainers only the allowed part of the server's environment", () => {
    const config = loadConfig({ PATH: '/usr/bin:/bin', HOME: '/home/versa', DATABASE_URL: 'postgres://versa:secret@db/versa', VERSA_TRAIN_THREADS: '2' });
    assert.deepEqual(config.trainerEnv, { PATH: '/usr/bin:/bin', HOME: '/home/versa', VERSA_TRAIN_THREADS: '2' });
  });
});

describe('runTrainer', { timeout: 120_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-protocol-'));
    await writeFile(join(dir, 'run.json'), '{}');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** Runs a stand-in trainer that prints `lines` (Python expressions of dicts, one event each) and then runs `tail`. */
  const fake = async (name: string, lines: string[], tail = '') => {
    const script = join(dir, `${name}.py`);
    await writeFile(script, `import json, os, sys, time\n${lines.map((l) => `print(json.dumps(${l}), flush=True)`).join('\n')}\n${tail}\n`);
    return runTrainer({ python: pythonPath(), script, configPath: join(dir, 'run.json'), cwd: dir, env: trainerEnv, killAfterMs: 500 });
  };
  const trainerEnv = loadConfig({ PATH: process.env.PATH, DATABASE_URL: 'postgres://versa:secret@db/versa', SECRET_TOKEN: 'hunter2' }).trainerEnv;
  const started = `dict(event="started", protocol=${P}, adapter="fake", params={}, env={"seen": sorted(os.environ)})`;
  const metrics = `dict(event="metrics", protocol=${P}, task="detect", metrics={"map50": 0.5}, per_class=[])`;
  const finished = `dict(event="finished", protocol=${P}, params={"epochs": 1}, duration_s=0.1, env={})`;

  it("assembles a run's result from its metrics, artifact and finished events", async () => {
    const outcome = await fake('good', [started, metrics, `dict(event="artifact", protocol=${P}, name="onnx", path="weights/best.onnx")`, finished]);
    assert.equal(outcome.error, null);
    assert.deepEqual(outcome.result?.metrics.metrics, { map50: 0.5 });
    assert.deepEqual(outcome.result?.artifacts, { onnx: 'weights/best.onnx' });
    assert.deepEqual(outcome.result?.finished.params, { epochs: 1 });
    assert.equal(outcome.events, 4);
  });

  it('passes the child nothing but the trainer environment', async () => {
    let env: string[] = [];
    const script = join(dir, 'env.py');
    await writeFile(script, `import json, os\nprint(json.dumps(${started}))\n`);
    await runTrainer({
      python: pythonPath(), script, configPath: join(dir, 'run.json'), cwd: dir, env: trainerEnv,
      onEvent: (event) => {
        if (event.event === 'started') env = (event.env as { seen: string[] }).seen;
      },
    });
    assert.ok(env.includes('PATH'));
    const allowed = new Set<string>([...TRAINER_ENV_NAMES, 'PYTHONUNBUFFERED', 'PYTHONDONTWRITEBYTECODE']);
    assert.deepEqual(env.filter((name) => !allowed.has(name)), [], 'DATABASE_URL, SECRET_TOKEN and the rest stay with the server');
  });

  it('stops a trainer whose event breaks the protocol, and fails the run with the reason', async () => {
    const begun = Date.now();
    const outcome = await fake('broken', [started, `dict(event="epoch", protocol=${P}, epoch=0, epochs=2, progress=0.5, eta_seconds=None)`, metrics, finished], 'time.sleep(60)');
    assert.ok(Date.now() - begun < 30_000, 'stopped, not waited for');
    assert.equal(outcome.result, null);
    assert.match(outcome.error ?? '', /'epoch' event is malformed: \/epoch must be >= 1/);
  });

  it('fails a trainer of another protocol version, and one that exits without its finished event', async () => {
    const old = await fake('old', ['dict(event="final", metrics={})']);
    assert.equal(old.result, null);
    assert.match(old.error ?? '', /speaks protocol null, Versa expects 2/);
    const unfinished = await fake('unfinished', [started, metrics]);
    assert.equal(unfinished.code, 0);
    assert.equal(unfinished.result, null);
    assert.match(unfinished.error ?? '', /without its metrics and finished events/);
  });
});
