import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { pythonPath, TRAINER_DIR } from '../../src/training/python.js';

/** The trainer package's own tests (trainer/tests, pytest), run by `npm test`: this test fails when they fail. */
describe('trainer/ (pytest)', { timeout: 15 * 60_000 }, () => {
  it('passes its own tests: metrics by hand, the protocol and its event stream, seeded determinism', () => {
    const run = spawnSync(pythonPath(), ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
      cwd: TRAINER_DIR,
      encoding: 'utf8',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      maxBuffer: 64 * 1024 * 1024,
    });
    assert.equal(run.error, undefined, `${pythonPath()} -m pytest could not run: ${run.error?.message} (apt-get install -y python3-pytest)`);
    assert.equal(run.status, 0, `pytest failed:\n${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /\d+ passed/);
  });
});
