import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TemporaryFiles } from '../../src/modules/maintenance/temporary-files.adapter.js';

describe('sweep of the temporary area', () => {
  let root: string;
  before(async () => (root = await mkdtemp(join(tmpdir(), 'versa-sweep-'))));
  after(() => rm(root, { recursive: true, force: true }));

  it('removes what was not written for the grace period, keeps live folders and fresh files, and is idempotent', async () => {
    const tmp = join(root, 'tmp');
    const old = new Date(Date.now() - 3_600_000);
    // A dead import (everything old), a live import (its folder touched by the heartbeat, its files old), and the
    // shared model-uploads folder with one abandoned and one in-flight spool file.
    await mkdir(join(tmp, 'versa-import-dead', 'images'), { recursive: true });
    await writeFile(join(tmp, 'versa-import-dead', 'images', 'a.jpg'), 'x');
    await mkdir(join(tmp, 'versa-import-live'), { recursive: true });
    await writeFile(join(tmp, 'versa-import-live', 'b.jpg'), 'x');
    await mkdir(join(tmp, 'model-uploads'), { recursive: true });
    await writeFile(join(tmp, 'model-uploads', 'abandoned.upload'), 'x');
    await writeFile(join(tmp, 'model-uploads', 'in-flight.upload'), 'x');
    for (const path of ['versa-import-dead/images/a.jpg', 'versa-import-dead/images', 'versa-import-dead', 'versa-import-live/b.jpg', 'model-uploads/abandoned.upload', 'model-uploads']) {
      await utimes(join(tmp, path), old, old);
    }
    const files = new TemporaryFiles(tmp);
    const cutoff = Date.now() - 60_000;
    assert.equal(await files.removeStale(cutoff), 4);
    assert.deepEqual((await readdir(tmp)).sort(), ['model-uploads', 'versa-import-live']);
    assert.deepEqual(await readdir(join(tmp, 'model-uploads')), ['in-flight.upload']);
    assert.deepEqual(await readdir(join(tmp, 'versa-import-live')), ['b.jpg']);
    assert.equal(await files.removeStale(cutoff), 0);
  });
});
