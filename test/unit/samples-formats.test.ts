import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ColumnProfile, convertCell } from '../../src/formats/samples/column-types.js';
import { LineError, readLines } from '../../src/formats/samples/line-reader.js';
import { identifyMedia, MediaRejectedError, probeMediaFile } from '../../src/media/media-probe.js';
import { readMp4Facts } from '../../src/media/mp4-header.js';
import { normaliseTextSpans, SampleRuleError } from '../../src/modules/samples/sample-rules.logic.js';
import { mp4File, wavFile } from '../helpers/media-fixtures.js';

describe('sample formats', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'versa-samples-unit-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  it('infers column types from every non-empty cell', () => {
    const types = (cells: string[]) => {
      const p = new ColumnProfile();
      cells.forEach((c) => p.add(c));
      return p.type();
    };
    assert.equal(types(['1', '', '-3']), 'integer');
    assert.equal(types(['1', '2.5', '1e3']), 'number');
    assert.equal(types(['true', 'No', '']), 'boolean');
    assert.equal(types(['2024-01-02', '2024-02-29T10:00:00Z']), 'date');
    assert.equal(types(['red', 'blue', 'red', 'red']), 'category');
    assert.equal(types(Array.from({ length: 200 }, (_, i) => `free text ${i}`)), 'text');
    assert.equal(types(['']), 'text');
    assert.equal(convertCell('', 'integer'), null);
    assert.equal(convertCell('yes', 'boolean'), true);
    assert.equal(convertCell('=1+1', 'text'), '=1+1');
  });

  it('tells media by their bytes, never their names', () => {
    assert.equal(identifyMedia(wavFile(0.1))?.container, 'wav');
    assert.equal(identifyMedia(mp4File(1))?.container, 'mp4');
    assert.equal(identifyMedia(Buffer.from('fLaC\0\0\0\0'))?.container, 'flac');
    assert.equal(identifyMedia(Buffer.from('OggS\0\0\0\0'))?.container, 'ogg');
    assert.equal(identifyMedia(Buffer.from('ID3\x04\0\0\0\0'))?.container, 'mp3');
    assert.equal(identifyMedia(Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x84]), Buffer.from('webm')]))?.container, 'webm');
    assert.equal(identifyMedia(Buffer.from('RIFF....AVI LIST')), null);
    assert.equal(identifyMedia(Buffer.from('<html>')), null);
  });

  it('reads duration and frame rate from an MP4 movie header, and refuses audio posing as video', async () => {
    const mp4 = join(dir, 'clip');
    await writeFile(mp4, mp4File(3, 30));
    assert.deepEqual(await readMp4Facts(mp4), { durationS: 3, fps: 30, hasVideo: true, hasAudio: false });
    const wav = join(dir, 'sound.mp4');
    await writeFile(wav, wavFile(0.5));
    await assert.rejects(probeMediaFile(wav, 'video'), MediaRejectedError);
    assert.equal((await probeMediaFile(wav, 'audio')).durationS, 0.5);
  });

  it('splits lines in chunks, numbering them, and refuses an over-long line', async () => {
    const path = join(dir, 'lines.jsonl');
    await writeFile(path, '\uFEFFa\r\n\nb\nc');
    const lines = [];
    for await (const batch of readLines(path, 100)) lines.push(...batch);
    assert.deepEqual(lines, [{ line: 1, text: 'a' }, { line: 3, text: 'b' }, { line: 4, text: 'c' }]);
    await writeFile(path, `ok\n${'x'.repeat(200)}\n`);
    await assert.rejects(async () => {
      for await (const _ of readLines(path, 100)) void _;
    }, (err: unknown) => err instanceof LineError && err.line === 2);
  });

  it('keeps spans inside the text and off surrogate pairs', () => {
    assert.deepEqual(normaliseTextSpans([[0, 2, 'A']], 'ab'), [{ start: 0, end: 2, label: 'A' }]);
    assert.throws(() => normaliseTextSpans([[0, 3, 'A']], 'ab'), SampleRuleError);
    assert.throws(() => normaliseTextSpans([[1, 1, 'A']], 'ab'), SampleRuleError);
    assert.throws(() => normaliseTextSpans([[0, 1, 'A']], '😀'), /surrogate/);
    assert.throws(() => normaliseTextSpans([{ start: 0.5, end: 1, label: 'A' }], 'ab'), SampleRuleError);
  });
});
