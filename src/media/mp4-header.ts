import { open } from 'node:fs/promises';

/** What an MP4/MOV movie header says: its duration and, for a video track, the frame rate. */
export interface Mp4Facts {
  durationS: number | null;
  fps: number | null;
  hasVideo: boolean;
  hasAudio: boolean;
}

/** A `moov` box larger than this is refused (real ones are kilobytes to a few megabytes). */
const MAX_MOOV_BYTES = 64 * 1024 * 1024;
const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl']);

/**
 * Reads the movie header of an ISO base media file (MP4, M4A, MOV): walks the top-level boxes by their headers
 * (the media data is never read), then parses `moov`: `mvhd` for the duration, each track's `hdlr` for its kind,
 * and a video track's `mdhd` and `stts` for its frame rate. Null facts where the file does not say.
 */
export async function readMp4Facts(path: string): Promise<Mp4Facts> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(16);
    let at = 0;
    while (at + 8 <= size) {
      const { bytesRead } = await handle.read(head, 0, 16, at);
      if (bytesRead < 8) break;
      let boxSize = head.readUInt32BE(0);
      const type = head.toString('latin1', 4, 8);
      let headerSize = 8;
      if (boxSize === 1 && bytesRead >= 16) {
        boxSize = Number(head.readBigUInt64BE(8));
        headerSize = 16;
      } else if (boxSize === 0) boxSize = size - at;
      if (boxSize < headerSize) break;
      if (type === 'moov') {
        if (boxSize > MAX_MOOV_BYTES) break;
        const moov = Buffer.alloc(boxSize - headerSize);
        await handle.read(moov, 0, moov.length, at + headerSize);
        return parseMoov(moov);
      }
      at += boxSize;
    }
    return { durationS: null, fps: null, hasVideo: false, hasAudio: false };
  } finally {
    await handle.close();
  }
}

interface Box {
  type: string;
  body: Buffer;
}

function* boxes(buffer: Buffer): Generator<Box> {
  let at = 0;
  while (at + 8 <= buffer.length) {
    let size = buffer.readUInt32BE(at);
    const type = buffer.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1 && at + 16 <= buffer.length) {
      size = Number(buffer.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = buffer.length - at;
    if (size < header || at + size > buffer.length) return;
    yield { type, body: buffer.subarray(at + header, at + size) };
    at += size;
  }
}

/** Timescale and duration of an `mvhd` or `mdhd` (versions 0 and 1). */
function timing(body: Buffer): { timescale: number; duration: number } | null {
  if (body.length < 4) return null;
  const version = body[0];
  if (version === 1 && body.length >= 32) return { timescale: body.readUInt32BE(20), duration: Number(body.readBigUInt64BE(24)) };
  if (version === 0 && body.length >= 20) return { timescale: body.readUInt32BE(12), duration: body.readUInt32BE(16) };
  return null;
}

function parseMoov(moov: Buffer): Mp4Facts {
  const facts: Mp4Facts = { durationS: null, fps: null, hasVideo: false, hasAudio: false };
  for (const box of boxes(moov)) {
    if (box.type === 'mvhd') {
      const t = timing(box.body);
      if (t && t.timescale > 0) facts.durationS = Math.round((t.duration / t.timescale) * 1000) / 1000;
    } else if (box.type === 'trak') {
      const track = { handler: '', media: null as ReturnType<typeof timing>, samples: 0 };
      const walk = (buffer: Buffer) => {
        for (const b of boxes(buffer)) {
          if (CONTAINERS.has(b.type)) walk(b.body);
          else if (b.type === 'hdlr' && b.body.length >= 12) track.handler = b.body.toString('latin1', 8, 12);
          else if (b.type === 'mdhd') track.media = timing(b.body);
          else if (b.type === 'stts' && b.body.length >= 8) {
            const entries = b.body.readUInt32BE(4);
            for (let i = 0; i < entries && 8 + i * 8 + 8 <= b.body.length; i++) track.samples += b.body.readUInt32BE(8 + i * 8);
          }
        }
      };
      walk(box.body);
      if (track.handler === 'soun') facts.hasAudio = true;
      if (track.handler === 'vide') {
        facts.hasVideo = true;
        if (track.media && track.media.timescale > 0 && track.media.duration > 0 && track.samples > 0) {
          facts.fps = Math.round((track.samples / (track.media.duration / track.media.timescale)) * 1000) / 1000;
        }
      }
    }
  }
  return facts;
}
