/** Tiny media files built in code, so tests need no binary fixtures: a PCM WAV and a minimal MP4 (header boxes only). */

/** A mono 16-bit PCM WAV of `seconds` of a quiet sine tone. */
export function wavFile(seconds: number, sampleRate = 8000): Buffer {
  const n = Math.round(seconds * sampleRate);
  const b = Buffer.alloc(44 + n * 2);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + n * 2, 4);
  b.write('WAVE', 8);
  b.write('fmt ', 12);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(sampleRate, 24);
  b.writeUInt32LE(sampleRate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(n * 2, 40);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / sampleRate)), 44 + i * 2);
  return b;
}

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
}

function fullBox(type: string, fields: Buffer): Buffer {
  return box(type, Buffer.alloc(4), fields);
}

/** An MP4 with a movie header (duration) and one video track of `frames` frames at `fps`; no media data. */
export function mp4File(seconds: number, fps = 25): Buffer {
  const ftyp = box('ftyp', Buffer.from('isom', 'latin1'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2mp41', 'latin1'));
  const mvhd = Buffer.alloc(96);
  mvhd.writeUInt32BE(1000, 8); // timescale
  mvhd.writeUInt32BE(Math.round(seconds * 1000), 12); // duration
  mvhd.writeUInt32BE(0x00010000, 16); // rate
  mvhd.writeUInt16BE(0x0100, 20); // volume
  [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].forEach((v, i) => mvhd.writeUInt32BE(v, 32 + i * 4));
  mvhd.writeUInt32BE(2, 92); // next track id
  const tkhd = Buffer.alloc(80);
  tkhd.writeUInt32BE(1, 8); // track id
  tkhd.writeUInt32BE(Math.round(seconds * 1000), 16);
  [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].forEach((v, i) => tkhd.writeUInt32BE(v, 36 + i * 4));
  tkhd.writeUInt32BE(64 << 16, 72);
  tkhd.writeUInt32BE(48 << 16, 76);
  const frames = Math.round(seconds * fps);
  const mdhd = Buffer.alloc(20);
  mdhd.writeUInt32BE(fps, 8);
  mdhd.writeUInt32BE(frames, 12);
  mdhd.writeUInt16BE(0x55c4, 16); // language "und"
  const hdlr = Buffer.concat([Buffer.alloc(4), Buffer.from('vide', 'latin1'), Buffer.alloc(12), Buffer.from('VideoHandler\0', 'latin1')]);
  const stts = Buffer.alloc(12);
  stts.writeUInt32BE(1, 0);
  stts.writeUInt32BE(frames, 4);
  stts.writeUInt32BE(1, 8);
  const stsd = Buffer.alloc(4);
  const stbl = box('stbl', fullBox('stsd', stsd), fullBox('stts', stts));
  const minf = box('minf', fullBox('vmhd', Buffer.alloc(8)), stbl);
  const mdia = box('mdia', fullBox('mdhd', mdhd), fullBox('hdlr', hdlr), minf);
  const trak = box('trak', fullBox('tkhd', tkhd), mdia);
  const moov = box('moov', fullBox('mvhd', mvhd), trak);
  return Buffer.concat([ftyp, moov]);
}
