import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

// The Node minimum in package.json's engines is the real one: the running Node satisfies it, and no runtime
// dependency declares a stricter one unnoticed (scripts/check-engines.mjs, which CI runs through `npm test`).
describe('engines', () => {
  it('the running Node and every runtime dependency agree with engines.node', () => {
    const out = execFileSync(process.execPath, ['scripts/check-engines.mjs'], { encoding: 'utf8' });
    assert.match(out, /^engines ok: /);
  });
});
