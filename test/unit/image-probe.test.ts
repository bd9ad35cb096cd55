import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { identifyImage, ImageRejectedError, probeImage } from '../../src/imaging/image-probe.js';
import { detectImageType, IMAGE_TYPES } from '../../src/imaging/image-type.js';
import { filenameStem, storedFilenameCandidates } from '../../src/modules/images/stored-filename.logic.js';

const make = (format: 'jpeg' | 'png' | 'webp' | 'tiff' | 'gif' | 'avif', width = 12, height = 8) =>
  sharp({ create: { width, height, channels: 3, background: '#336699' } }).toFormat(format).toBuffer();

/** An ISO-BMFF `ftyp` box with the given major and compatible brands. */
function ftyp(major: string, compatible: string[]): Buffer {
  const size = 16 + compatible.length * 4;
  const box = Buffer.alloc(size);
  box.writeUInt32BE(size, 0);
  box.write('ftyp', 4, 'latin1');
  box.write(major, 8, 'latin1');
  compatible.forEach((brand, i) => box.write(brand, 16 + i * 4, 'latin1'));
  return box;
}

async function rejection(promise: Promise<unknown>): Promise<ImageRejectedError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ImageRejectedError, String(err));
    return err;
  }
  assert.fail('expected a rejection');
}

describe('detectImageType', () => {
  it('recognises every accepted format by its magic numbers', async () => {
    for (const [format, type] of [
      ['jpeg', IMAGE_TYPES.jpeg],
      ['png', IMAGE_TYPES.png],
      ['webp', IMAGE_TYPES.webp],
      ['tiff', IMAGE_TYPES.tiff],
      ['gif', IMAGE_TYPES.gif],
      ['avif', IMAGE_TYPES.avif],
    ] as const) {
      assert.equal(detectImageType(await make(format)), type, format);
    }
    assert.equal(detectImageType(Buffer.from('MM\0*\0\0\0\x08', 'latin1')), IMAGE_TYPES.tiff);
    assert.equal(detectImageType(Buffer.from('GIF87a', 'latin1')), IMAGE_TYPES.gif);
    assert.equal(detectImageType(ftyp('mif1', ['mif1', 'avif'])), IMAGE_TYPES.avif);
    assert.equal(detectImageType(ftyp('avis', [])), IMAGE_TYPES.avif);
  });

  it('recognises nothing else', async () => {
    const others = [
      Buffer.alloc(0),
      Buffer.from([0xff, 0xd8]),
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>'),
      Buffer.from('<?xml version="1.0"?><svg/>'),
      Buffer.from('%PDF-1.7\n'),
      Buffer.from('just some text'),
      Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1'),
      ftyp('heic', ['mif1', 'heic']),
      Buffer.from('BM6\0\0\0', 'latin1'),
    ];
    for (const bytes of others) assert.equal(detectImageType(bytes), null, bytes.toString('latin1'));
  });

  it('reads a view into a larger buffer at its own offset', async () => {
    const jpeg = await make('jpeg');
    const padded = Buffer.concat([Buffer.from('junk'), jpeg]);
    assert.equal(detectImageType(padded.subarray(4)), IMAGE_TYPES.jpeg);
    assert.equal(detectImageType(padded), null);
  });
});

describe('identifyImage', () => {
  it('rejects empty and unsupported bytes with their reasons', () => {
    assert.throws(() => identifyImage(Buffer.alloc(0)), (err: ImageRejectedError) => err.reason === 'empty');
    assert.throws(() => identifyImage(Buffer.from('<svg/>')), (err: ImageRejectedError) => err.reason === 'unsupported_type' && /JPEG, PNG, WebP, TIFF, GIF, AVIF/.test(err.message));
  });
});

describe('probeImage', () => {
  const limits = { maxPixels: 1_000_000 };

  it('reports the size and makes a WebP thumbnail no larger than the image', async () => {
    const probed = await probeImage(await make('png', 30, 20), IMAGE_TYPES.png, limits);
    assert.deepEqual([probed.width, probed.height], [30, 20]);
    const thumb = await sharp(probed.thumbnail).metadata();
    assert.deepEqual([thumb.format, thumb.width, thumb.height], ['webp', 30, 20]);
  });

  it('fits large images into 256 on the longest side', async () => {
    const probed = await probeImage(await make('jpeg', 300, 600), IMAGE_TYPES.jpeg, limits);
    const thumb = await sharp(probed.thumbnail).metadata();
    assert.deepEqual([thumb.width, thumb.height], [128, 256]);
  });

  it('swaps width and height for EXIF orientations 5–8 only', async () => {
    for (const orientation of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const bytes = await sharp({ create: { width: 30, height: 10, channels: 3, background: 'red' } }).jpeg().withMetadata({ orientation }).toBuffer();
      const probed = await probeImage(bytes, IMAGE_TYPES.jpeg, limits);
      const expected = orientation >= 5 ? [10, 30] : [30, 10];
      assert.deepEqual([probed.width, probed.height], expected, `orientation ${orientation}`);
      const thumb = await sharp(probed.thumbnail).metadata();
      assert.deepEqual([thumb.width, thumb.height], expected, `thumbnail, orientation ${orientation}`);
    }
  });

  it('hands the fitted, upright pixels to whileEncoding, and makes the same thumbnail either way', async () => {
    for (const orientation of [1, 6]) {
      const bytes = await sharp({ create: { width: 600, height: 300, channels: 3, background: 'red' } }).jpeg().withMetadata({ orientation }).toBuffer();
      let seen: { width: number; height: number; channels: number; bytes: number } | undefined;
      const measured = await probeImage(bytes, IMAGE_TYPES.jpeg, limits, (p) => (seen = { width: p.width, height: p.height, channels: p.channels, bytes: p.data.length }));
      const expected = orientation >= 5 ? [128, 256] : [256, 128];
      assert.deepEqual(seen, { width: expected[0], height: expected[1], channels: 3, bytes: expected[0] * expected[1] * 3 }, `orientation ${orientation}`);
      const plain = await probeImage(bytes, IMAGE_TYPES.jpeg, limits);
      for (const probed of [measured, plain]) {
        const thumb = await sharp(probed.thumbnail).metadata();
        assert.deepEqual([thumb.format, thumb.width, thumb.height], ['webp', ...expected], `orientation ${orientation}`);
      }
    }
  });

  it('does not change the input bytes', async () => {
    const bytes = await sharp({ create: { width: 30, height: 10, channels: 3, background: 'red' } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const copy = Buffer.from(bytes);
    await probeImage(bytes, IMAGE_TYPES.jpeg, limits);
    assert.ok(bytes.equals(copy));
  });

  it('refuses images over the pixel limit, counting encoded pixels', async () => {
    const err = await rejection(probeImage(await make('png', 1001, 1000), IMAGE_TYPES.png, limits));
    assert.equal(err.reason, 'too_many_pixels');
    assert.match(err.message, /1001×1000/);
    await probeImage(await make('png', 1000, 1000), IMAGE_TYPES.png, limits);
  });

  it('refuses bytes that start like an image but do not decode', async () => {
    const truncated = (await make('jpeg', 200, 200)).subarray(0, 200);
    assert.equal((await rejection(probeImage(truncated, IMAGE_TYPES.jpeg, limits))).reason, 'undecodable');
    const garbage = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)]);
    assert.equal((await rejection(probeImage(garbage, IMAGE_TYPES.png, limits))).reason, 'undecodable');
  });
});

describe('stored file names', () => {
  it('keeps only safe characters of the base name, without its extension', () => {
    assert.equal(filenameStem('Holiday Photo (1).JPG'), 'Holiday_Photo_1');
    assert.equal(filenameStem('../../etc/passwd'), 'passwd');
    assert.equal(filenameStem('C:\\Users\\me\\café.jpeg'), 'cafe');
    assert.equal(filenameStem('.hidden.png'), 'hidden');
    assert.equal(filenameStem('archive.tar.gz'), 'archive.tar');
    assert.equal(filenameStem('日本.png'), 'image');
    assert.equal(filenameStem(''), 'image');
    assert.equal(filenameStem('x'.repeat(300)).length, 100);
  });

  it('falls back to the hash when the name is taken', () => {
    const sha = 'ab'.repeat(32);
    assert.deepEqual(storedFilenameCandidates('shot.PNG', 'jpg', sha), ['shot.jpg', 'shot-abababab.jpg', `shot-${sha}.jpg`]);
  });
});
