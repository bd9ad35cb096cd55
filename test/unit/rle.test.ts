import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeRle, encodeRle, rleArea, rleBbox, rleProblem, type Bitmap } from '../../src/imaging/rle.js';
import { Random } from '../../src/lib/random.js';

/** A bitmap from rows of '#' (foreground) and '.' (background). */
function bitmap(...rows: string[]): Bitmap {
  const height = rows.length;
  const width = rows[0].length;
  const data = new Uint8Array(width * height);
  rows.forEach((row, y) => [...row].forEach((c, x) => (data[y * width + x] = c === '#' ? 1 : 0)));
  return { width, height, data };
}

/** The tight box of a bitmap's foreground, found pixel by pixel. */
function bruteBbox(mask: Bitmap) {
  let minX = Infinity, minY = Infinity, maxX = -1, maxY = -1;
  for (let y = 0; y < mask.height; y++) {
    for (let x = 0; x < mask.width; x++) {
      if (!mask.data[y * mask.width + x]) continue;
      minX = Math.min(minX, x); maxX = Math.max(maxX, x);
      minY = Math.min(minY, y); maxY = Math.max(maxY, y);
    }
  }
  return maxX < 0 ? null : { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 };
}

describe('COCO RLE', () => {
  it('encodes column by column, starting with a background run', () => {
    const mask = bitmap(
      '.#.',
      '##.',
    );
    // Columns top to bottom: [0,1] [1,1] [0,0] → runs: 1 bg, 3 fg, 2 bg.
    assert.deepEqual(encodeRle(mask), { size: [2, 3], counts: [1, 3, 2] });
  });

  it('starts with an empty background run when the first pixel is foreground', () => {
    assert.deepEqual(encodeRle(bitmap('#.', '..')).counts, [0, 1, 3]);
    assert.deepEqual(encodeRle(bitmap('##', '##')).counts, [0, 4]);
    assert.deepEqual(encodeRle(bitmap('..', '..')).counts, [4]);
  });

  it('decodes what it encodes', () => {
    const random = new Random(7);
    for (let n = 0; n < 50; n++) {
      const width = random.int(1, 9);
      const height = random.int(1, 9);
      const data = new Uint8Array(width * height).map(() => (random.chance(0.4) ? 1 : 0));
      const mask = { width, height, data };
      assert.deepEqual(decodeRle(encodeRle(mask)), mask);
    }
  });

  it('decodes column-major runs into row-major pixels', () => {
    assert.deepEqual(decodeRle({ size: [2, 3], counts: [1, 3, 2] }), bitmap('.#.', '##.'));
  });

  it('ignores runs that reach past the last pixel instead of writing into other rows', () => {
    // 2×2 image, counts summing to 6: the extra foreground must not wrap onto visible pixels.
    assert.deepEqual(decodeRle({ size: [2, 2], counts: [4, 2] }), bitmap('..', '..'));
    assert.deepEqual(decodeRle({ size: [2, 2], counts: [3, 3] }), bitmap('..', '.#'));
  });

  it('counts the foreground pixels', () => {
    assert.equal(rleArea({ size: [2, 3], counts: [1, 3, 2] }), 3);
    assert.equal(rleArea({ size: [2, 2], counts: [4] }), 0);
    assert.equal(rleArea({ size: [2, 2], counts: [0, 1, 1, 2] }), 3);
  });

  it('finds the tight box of the foreground', () => {
    assert.deepEqual(rleBbox(encodeRle(bitmap('....', '..#.', '....'))), { x: 2, y: 1, width: 1, height: 1 });
    assert.deepEqual(rleBbox(encodeRle(bitmap('##', '##'))), { x: 0, y: 0, width: 2, height: 2 });
    assert.equal(rleBbox({ size: [3, 3], counts: [9] }), null);
    assert.equal(rleBbox({ size: [3, 3], counts: [4, 0, 5] }), null);
  });

  it('gives a box spanning all rows for a run that wraps into the next column', () => {
    // 3 rows: the run covers the bottom of column 0 and the top of column 1.
    const mask = bitmap('.#', '..', '#.');
    assert.deepEqual(encodeRle(mask).counts, [2, 2, 2]);
    assert.deepEqual(rleBbox(encodeRle(mask)), { x: 0, y: 0, width: 2, height: 3 });
  });

  it('agrees with a pixel-by-pixel box on random masks', () => {
    const random = new Random(11);
    for (let n = 0; n < 200; n++) {
      const width = random.int(1, 8);
      const height = random.int(1, 8);
      const density = random.uniform(0, 0.3);
      const data = new Uint8Array(width * height).map(() => (random.chance(density) ? 1 : 0));
      const mask = { width, height, data };
      assert.deepEqual(rleBbox(encodeRle(mask)), bruteBbox(mask), `mask ${width}×${height} ${[...data].join('')}`);
    }
  });

  it('says what is wrong with a malformed RLE', () => {
    assert.equal(rleProblem({ size: [2, 3], counts: [1, 3, 2] }, 2, 3), null);
    assert.match(rleProblem({ size: [3, 2], counts: [6] }, 2, 3)!, /does not match the image size \[2, 3\]/);
    assert.match(rleProblem({ size: [2, 3], counts: [1, 3] }, 2, 3)!, /sum to 4, expected .* 6/);
    assert.match(rleProblem({ size: [2, 3], counts: [1, 3, 3] }, 2, 3)!, /sum to 7/);
    assert.match(rleProblem({ size: [2, 3], counts: [1, -1, 6] }, 2, 3)!, /non-negative integers/);
    assert.match(rleProblem({ size: [2, 3], counts: [1.5, 4.5] }, 2, 3)!, /non-negative integers/);
    assert.match(rleProblem({ size: [2, 3], counts: ['6' as unknown as number] }, 2, 3)!, /non-negative integers/);
  });
});
