import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PACKAGE = new URL('../../clients/python/', import.meta.url).pathname;

/** The first interpreter that can build a wheel offline (setuptools with bdist_wheel: setuptools ≥ 70.1 or `wheel`). */
async function builder(): Promise<string | null> {
  const check = 'import setuptools,sys\ntry:\n import wheel\nexcept ImportError:\n v=tuple(int(p) for p in setuptools.__version__.split(".")[:2]); sys.exit(0 if v>=(70,1) else 1)';
  for (const python of ['python3', '/usr/bin/python3']) {
    try {
      await run(python, ['-c', check]);
      await run(python, ['-m', 'venv', '--help']);
      return python;
    } catch {
      // try the next one
    }
  }
  return null;
}

describe('Python client package (clients/python)', { timeout: 5 * 60_000 }, () => {
  let work: string;
  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'versa-py-pkg-'));
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it("passes its own tests: retries on 429/503 honouring Retry-After, Link paging, waits' timeouts, streamed bodies", async () => {
    const { stderr } = await run('python3', ['-m', 'unittest', 'discover', '-s', join(PACKAGE, 'tests'), '-p', 'test_*.py', '-v'], { timeout: 120_000 });
    assert.match(stderr, /test_429_then_200_waits_the_retry_after_and_answers \(.*\) \.\.\. ok/);
    assert.match(stderr, /test_a_multipart_body_is_read_from_disk_a_chunk_at_a_time \(.*\) \.\.\. ok/);
    assert.match(stderr, /^OK$/m);
  });

  it('installs with `pip install ./clients/python` into a fresh venv, offline, and imports from there', async (t) => {
    const python = await builder();
    if (!python) {
      t.skip('no python3 here can build a wheel offline (needs setuptools ≥ 70.1, or setuptools and wheel)');
      return;
    }
    // A copy, so the build's by-products (build/, *.egg-info) do not land in the source tree.
    const source = join(work, 'src');
    await cp(PACKAGE, source, { recursive: true, filter: (path) => !/(__pycache__|\.egg-info|\/build)$/.test(path) });
    const venv = join(work, 'venv');
    await run(python, ['-m', 'venv', '--system-site-packages', venv]);
    const pip = await run(join(venv, 'bin/python'), ['-m', 'pip', 'install', '--no-index', '--no-build-isolation', '--no-cache-dir', source], { timeout: 180_000 });
    assert.match(pip.stdout, /Successfully installed versa-client-/);
    const probe = [
      'import json, versa_client, versa_client.client, versa_client.models, versa_client.transport, versa_client.errors, versa_client.progress',
      'import importlib.resources as r',
      'print(json.dumps({"file": versa_client.__file__, "version": versa_client.__version__, "typed": (r.files("versa_client") / "py.typed").is_file(), "names": sorted(versa_client.__all__)}))',
    ].join('\n');
    const { stdout } = await run(join(venv, 'bin/python'), ['-c', probe], { cwd: work });
    const seen = JSON.parse(stdout);
    assert.ok(seen.file.startsWith(join(venv, 'lib')), seen.file);
    const pyproject = await readFile(join(PACKAGE, 'pyproject.toml'), 'utf8');
    assert.equal(seen.version, pyproject.match(/^version = "([^"]+)"/m)![1]);
    assert.equal(seen.typed, true);
    for (const name of ['Versa', 'Paged', 'Project', 'ProjectClass', 'Image', 'Annotation', 'Version', 'Export', 'Job', 'TrainingRun', 'Model', 'Experiment', 'TrainingRefused', 'WaitTimeout']) {
      assert.ok(seen.names.includes(name), name);
    }
  });
});
