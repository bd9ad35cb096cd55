import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planEntries } from '../../src/modules/imports/entry-pairing.logic.js';

const entry = (id: number, sha256: string, original_name: string) => ({ id, sha256, original_name });

describe('planEntries: what becomes of dataset entries whose bytes are not unique', () => {
  it('into a new project: every entry is an image; the later ones of the same bytes share them with the first', () => {
    const plan = planEntries([entry(1, 'x', 'a.jpg'), entry(2, 'y', 'c.jpg'), entry(3, 'x', 'b.jpg'), entry(4, 'y', 'd.jpg'), entry(5, 'x', 'a.jpg')], []);
    assert.deepEqual(plan.merges, []);
    assert.deepEqual(plan.shared, [
      { staged: 3, file: 'b.jpg', sameAs: 'a.jpg' },
      { staged: 4, file: 'd.jpg', sameAs: 'c.jpg' },
      { staged: 5, file: 'a.jpg', sameAs: 'a.jpg' },
    ]);
  });

  it("pairs each project image with one entry, of the image's own name first, then in order; the entries left over share the bytes", () => {
    const existing = [entry(10, 'x', 'up.jpg'), entry(11, 'x', 'b.jpg')];
    const plan = planEntries([entry(1, 'x', 'a.jpg'), entry(2, 'x', 'b.jpg'), entry(3, 'x', 'c.jpg')], existing);
    assert.deepEqual(plan.merges, [{ staged: 2, into: 11 }, { staged: 1, into: 10 }]);
    assert.deepEqual(plan.shared, [{ staged: 3, file: 'c.jpg', sameAs: 'up.jpg' }]);
  });

  it('leaves project images without an entry alone, and two entries never go to one image', () => {
    const existing = [entry(10, 'x', 'a.jpg'), entry(11, 'x', 'a.jpg'), entry(12, 'x', 'a.jpg')];
    const plan = planEntries([entry(1, 'x', 'a.jpg'), entry(2, 'x', 'a.jpg')], existing);
    assert.deepEqual(plan.merges, [{ staged: 1, into: 10 }, { staged: 2, into: 11 }]);
    assert.deepEqual(plan.shared, []);
  });
});
