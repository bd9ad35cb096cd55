import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { multipart } from '../helpers/multipart.js';
import { startTestApp, type Client, type TestApp } from '../helpers/test-app.js';

/**
 * The training queue is fair: a project has one run admitted to the job queue at a time (TRAINING_PER_PROJECT), so a
 * run waiting for its project's slot does not hold back another project's run, the job answer says where a queued run
 * stands, and an account may have only so many runs waiting (TRAINING_QUEUED_PER_USER; one more is 429). Before, one
 * instance-wide first-come queue: project A's second run started before project B's first.
 *
 * The runs are real tabular runs, each held at its start by the interpreter wrapper below until the test opens its gate.
 */
describe('fair training queue', { timeout: 5 * 60_000 }, () => {
  let t: TestApp;
  let alice: Client;
  let bob: Client;
  let dir: string;
  let gates: string;

  const open = (experimentId: number | 'all') => writeFile(join(gates, experimentId === 'all' ? 'all' : `exp-${experimentId}`), '');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'versa-queue-'));
    gates = join(dir, 'gates');
    await mkdir(gates);
    const python = join(dir, 'python3');
    // The tabular trainer starts once its gate (named after the run's folder, exp-<id>) exists; all else runs at once.
    await writeFile(python, [
      '#!/bin/sh',
      'case "$1" in *versa_tabular.py)',
      `  run=$(basename "$(dirname "$3")"); while [ ! -e "${gates}/$run" ] && [ ! -e "${gates}/all" ]; do sleep 0.05; done;;`,
      'esac',
      'exec /usr/bin/python3 "$@"',
      '',
    ].join('\n'));
    await chmod(python, 0o755);
    t = await startTestApp({ PYTHON: python, TRAINING_QUEUED_PER_USER: '2' });
    await t.user();
    alice = await t.user();
    bob = await t.user();
  });
  after(async () => {
    await open('all');
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  const tabularProject = async (owner: Client, name: string) => {
    const id = (await owner.post('/api/projects', { name, project_type: 'classification' })).body.id as number;
    const rows = ['x,label', ...Array.from({ length: 60 }, (_, i) => `${(i / 60).toFixed(3)},${i % 2 ? 'odd' : 'even'}`)];
    const { payload, headers } = multipart([{ name: 'file', filename: 't.csv', data: Buffer.from(rows.join('\n') + '\n'), contentType: 'text/csv' }], { target: 'label' });
    assert.equal((await owner.request({ method: 'POST', url: `/api/projects/${id}/import/tabular`, payload, headers })).status, 201);
    assert.equal((await owner.post(`/api/projects/${id}/samples/splits`, { train: 70, valid: 30, test: 0, strategy: 'stratified', seed: 1 })).status, 200);
    return id;
  };
  const train = async (who: Client, projectId: number) => {
    const res = await who.post(`/api/projects/${projectId}/adapters/train`, { adapter: 'tabular', epochs: 5, require_ready: false });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body as { id: number; experiment_id: number; status: string; queue_position: number | null };
  };
  const job = async (who: Client, id: number) => (await who.get(`/api/train/jobs/${id}`)).body;
  const until = async (who: Client, id: number, statuses: string[]) => {
    const deadline = Date.now() + 2 * 60_000;
    for (;;) {
      const body = await job(who, id);
      if (statuses.includes(body.status)) return body;
      if (Date.now() > deadline) throw new Error(`job ${id} still ${body.status}`);
      await sleep(50);
    }
  };

  it("lets project B's run start while project A's second run waits, shows queued positions, and caps an account's waiting runs", async () => {
    const a = await tabularProject(alice, 'A');
    const b = await tabularProject(bob, 'B');

    const a1 = await train(alice, a);
    const running = await until(alice, a1.id, ['running']);
    assert.equal(running.queue_position, null, 'a running run has no place in the queue');

    const a2 = await train(alice, a);
    assert.equal(a2.status, 'queued');
    assert.equal(a2.queue_position, 1);
    const b1 = await train(bob, b);
    assert.equal(b1.status, 'queued');
    assert.equal(b1.queue_position, 1, "B's first run goes ahead of A's second, which waits for A's slot");
    assert.equal((await job(alice, a2.id)).queue_position, 2);
    const a3 = await train(alice, a);
    assert.equal(a3.queue_position, 3);

    // Alice has two runs waiting, her allowance: a third is refused, and nothing is recorded for it.
    const experimentsBefore = (await alice.get(`/api/projects/${a}/experiments`)).body.length;
    const refused = await alice.post(`/api/projects/${a}/adapters/train`, { adapter: 'tabular', epochs: 5, require_ready: false });
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.match(refused.body.detail, /2 training runs waiting to start/);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal((await alice.get(`/api/projects/${a}/experiments`)).body.length, experimentsBefore);
    // Bob's allowance is his own.
    assert.equal((await bob.get(`/api/projects/${b}/train/status`)).body.job.queue_position, 1);

    // A1 ends: B1 starts, while A2 still waits (it is next).
    await open(a1.experiment_id);
    assert.equal((await until(alice, a1.id, ['succeeded', 'failed'])).status, 'succeeded');
    await until(bob, b1.id, ['running']);
    const waiting = await job(alice, a2.id);
    assert.equal(waiting.status, 'queued', 'A2 waits for its project, not B1 for A2');
    assert.equal(waiting.queue_position, 1);
    assert.equal((await job(alice, a3.id)).queue_position, 2);

    // A run of a project with no run in progress never waits behind A's queue, whatever the order of requests.
    await open(b1.experiment_id);
    await until(alice, a2.id, ['running']);
    await open(a2.experiment_id);
    await open(a3.experiment_id);
    for (const [who, id] of [[bob, b1.id], [alice, a2.id], [alice, a3.id]] as const) {
      const done = await until(who, id, ['succeeded', 'failed']);
      assert.equal(done.status, 'succeeded', done.error);
      assert.equal(done.queue_position, null);
    }
  });
});
