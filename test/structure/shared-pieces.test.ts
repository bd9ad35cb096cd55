import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { it } from 'node:test';

// The pieces more than one module shares are built once, in the composition root: one group-commit batcher (its
// "one batch at a time" must hold process-wide), one image feature recorder, one team workflow per kind of item.
// Samples once built a second batcher and a copy of the images' workflow; images and quality each their own recorder.
const SHARED = ['WriteBatcher', 'ImageFeatureRecorder', 'ItemWorkflow', 'LockGuard', 'AssignmentScope'];
const ROOT = 'src/app.ts';

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

it('builds each shared piece once, in the composition root', () => {
  const built = new Map<string, string[]>(SHARED.map((name) => [name, []]));
  for (const file of files('src')) {
    const text = readFileSync(file, 'utf8');
    for (const name of SHARED) {
      const count = text.split(`new ${name}(`).length - 1;
      for (let i = 0; i < count; i++) built.get(name)!.push(relative('.', file));
    }
  }
  assert.deepEqual(Object.fromEntries(built), {
    WriteBatcher: [ROOT],
    ImageFeatureRecorder: [ROOT],
    ItemWorkflow: [ROOT, ROOT],
    LockGuard: [ROOT],
    AssignmentScope: [ROOT],
  });
});
