import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp, { type JpegOptions } from 'sharp';
import { JpegStreamSplitter } from '../../src/media/jpeg-stream.js';

const jpeg = (seed: number) =>
  sharp({ create: { width: 40 + seed, height: 30, channels: 3, background: { r: seed * 40, g: 255 - seed * 30, b: 90 } } })
    .composite([{ input: Buffer.from(`<svg width="20" height="20"><circle cx="10" cy="10" r="${5 + seed}" fill="#f0f"/></svg>`), left: 3, top: 3 }])
    .jpeg({ quality: 90, restartInterval: seed % 2 === 0 ? 0 : 1 } as JpegOptions)
    .toBuffer();

/** A comment segment whose bytes hold the end-of-image marker, put right after start-of-image. */
function withTrickyComment(image: Buffer): Buffer {
  const text = Buffer.from([0x61, 0xff, 0xd9, 0x62, 0xff, 0xd8]);
  const segment = Buffer.concat([Buffer.from([0xff, 0xfe, 0, text.length + 2]), text]);
  return Buffer.concat([image.subarray(0, 2), segment, image.subarray(2)]);
}

/** Issue 26: FFmpeg's frames reach ingest as one stream of JPEG files, split back into files as they arrive. */
describe('JPEG stream splitter', () => {
  it('gives back each image whole, whatever the chunk boundaries, also with end markers inside a header segment', async () => {
    const images = [await jpeg(0), withTrickyComment(await jpeg(1)), await jpeg(2), await jpeg(3)];
    const stream = Buffer.concat(images);
    for (const size of [1, 2, 3, 7, 64, 1000, stream.length]) {
      const splitter = new JpegStreamSplitter();
      const out: Buffer[] = [];
      for (let i = 0; i < stream.length; i += size) out.push(...splitter.push(stream.subarray(i, i + size)));
      assert.equal(out.length, images.length, `chunks of ${size}`);
      out.forEach((image, i) => assert.ok(image.equals(images[i]), `image ${i}, chunks of ${size}`));
      assert.equal(splitter.pending, 0);
    }
  });

  it('holds back an incomplete image and refuses bytes that are not JPEG', async () => {
    const image = await jpeg(0);
    const splitter = new JpegStreamSplitter();
    assert.deepEqual(splitter.push(image.subarray(0, image.length - 1)), []);
    assert.equal(splitter.pending, image.length - 1);
    assert.equal(splitter.push(image.subarray(image.length - 1)).length, 1);
    assert.throws(() => new JpegStreamSplitter().push(Buffer.from('not a jpeg')), /not a JPEG stream/);
  });
});
