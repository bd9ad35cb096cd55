/**
 * Issue 26: FFmpeg writes each frame's thumbnail as a second output of the decoding run (WebP on descriptor 3), so the
 * ingest of a frame does not decode the full JPEG again; frames and thumbnails arrive paired, in order.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { decodeFrames } from '../../src/media/ffmpeg.js';
import { jpegFrameSize } from '../../src/media/jpeg-stream.js';
import { WebpStreamSplitter } from '../../src/media/webp-stream.js';
import { testVideo } from '../helpers/video-fixtures.js';

const paths = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' };

describe('frame thumbnails from FFmpeg', () => {
  it('every frame comes with its WebP thumbnail, fitted into the size and never enlarged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'versa-thumbs-'));
    try {
      const file = join(dir, 'in.mp4');
      await writeFile(file, testVideo({ size: '640x360', rate: 10, seconds: 2 }));
      const frames = [];
      for await (const frame of decodeFrames(paths, file, { step: 3, startS: 0, thumbnailSize: 256 })) frames.push(frame);
      assert.deepEqual(frames.map((f) => f.frame), [0, 3, 6, 9, 12, 15, 18]);
      for (const frame of frames) {
        assert.deepEqual(jpegFrameSize(frame.bytes), { width: 640, height: 360 });
        const meta = await sharp(frame.thumbnail!).metadata();
        assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 256, 144]);
      }
      // The box moves right: the thumbnails of the first and last frames differ where it is.
      const [first, last] = await Promise.all([frames[0], frames.at(-1)!].map((f) => sharp(f.thumbnail!).raw().toBuffer()));
      assert.notDeepEqual(first, last);
      const small = join(dir, 'small.mp4');
      await writeFile(small, testVideo({ size: '160x120', rate: 10, seconds: 1 }));
      for await (const frame of decodeFrames(paths, small, { step: 5, startS: 0, thumbnailSize: 256 })) {
        const meta = await sharp(frame.thumbnail!).metadata();
        assert.deepEqual([meta.width, meta.height], [160, 120], 'a frame smaller than the thumbnail keeps its size');
      }
      for await (const frame of decodeFrames(paths, small, { step: 5, startS: 0 })) assert.equal(frame.thumbnail, undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a stream of WebP files is split by their RIFF sizes, however the chunks fall', async () => {
    const images = await Promise.all([1, 2, 3].map((n) => sharp({ create: { width: 10 * n, height: 8, channels: 3, background: '#0a0' } }).webp().toBuffer()));
    const stream = Buffer.concat(images);
    const splitter = new WebpStreamSplitter();
    const out: Buffer[] = [];
    for (let at = 0; at < stream.length; at += 7) out.push(...splitter.push(stream.subarray(at, at + 7)));
    assert.deepEqual(out, images);
    assert.equal(splitter.pending, 0);
    assert.throws(() => new WebpStreamSplitter().push(Buffer.from('not a webp file at all')), /not a WebP stream/);
  });
});
