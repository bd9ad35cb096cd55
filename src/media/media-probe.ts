import { open, stat } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { parseStream } from 'music-metadata';
import { readMp4Facts } from './mp4-header.js';

/** A media container told by its bytes; the extension of the stored file comes from here, never from the name. */
export interface MediaType {
  readonly container: 'wav' | 'mp3' | 'flac' | 'ogg' | 'mp4' | 'webm' | 'mov';
  readonly mime: string;
  readonly ext: string;
  /** What the container can hold. */
  readonly kinds: readonly ('audio' | 'video')[];
}

export interface ProbedMedia {
  readonly type: MediaType;
  readonly durationS: number | null;
  readonly sampleRate: number | null;
  readonly fps: number | null;
  readonly channels: number | null;
}

export class MediaRejectedError extends Error {}

const ascii = (bytes: Buffer, start: number, end: number) => bytes.subarray(start, end).toString('latin1');

/** The container of a file from its first bytes (at least 64), or null when it is none of the accepted ones. */
export function identifyMedia(head: Buffer): MediaType | null {
  if (head.length >= 12 && ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WAVE') return { container: 'wav', mime: 'audio/wav', ext: 'wav', kinds: ['audio'] };
  if (head.length >= 4 && ascii(head, 0, 4) === 'fLaC') return { container: 'flac', mime: 'audio/flac', ext: 'flac', kinds: ['audio'] };
  if (head.length >= 4 && ascii(head, 0, 4) === 'OggS') return { container: 'ogg', mime: 'audio/ogg', ext: 'ogg', kinds: ['audio', 'video'] };
  if (head.length >= 3 && ascii(head, 0, 3) === 'ID3') return { container: 'mp3', mime: 'audio/mpeg', ext: 'mp3', kinds: ['audio'] };
  // An MPEG audio frame header: 11 sync bits, a valid version, layer III, a valid bitrate and sample rate.
  if (head.length >= 4 && head[0] === 0xff && (head[1] & 0xe0) === 0xe0 && (head[1] & 0x18) !== 0x08 && (head[1] & 0x06) === 0x02
    && (head[2] & 0xf0) !== 0xf0 && (head[2] & 0x0c) !== 0x0c) {
    return { container: 'mp3', mime: 'audio/mpeg', ext: 'mp3', kinds: ['audio'] };
  }
  if (head.length >= 12 && ascii(head, 4, 8) === 'ftyp') {
    const brand = ascii(head, 8, 12);
    if (brand === 'qt  ') return { container: 'mov', mime: 'video/quicktime', ext: 'mov', kinds: ['video'] };
    if (brand.startsWith('M4A') || brand.startsWith('M4B')) return { container: 'mp4', mime: 'audio/mp4', ext: 'm4a', kinds: ['audio'] };
    return { container: 'mp4', mime: 'video/mp4', ext: 'mp4', kinds: ['audio', 'video'] };
  }
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3) {
    // EBML: a WebM file names its DocType ("webm") in the header; Matroska proper is not accepted.
    if (head.includes(Buffer.from('webm', 'latin1'))) return { container: 'webm', mime: 'video/webm', ext: 'webm', kinds: ['audio', 'video'] };
  }
  return null;
}

/**
 * Tells a file's container by its bytes and reads its duration (and sample rate / frame rate where the container
 * says) with music-metadata, which reads headers only. Refuses files that are not an accepted container for `kind`,
 * and files whose duration cannot be read.
 */
export async function probeMediaFile(path: string, kind: 'audio' | 'video'): Promise<ProbedMedia> {
  const handle = await open(path, 'r');
  const head = Buffer.alloc(64);
  let read: number;
  try {
    ({ bytesRead: read } = await handle.read(head, 0, 64, 0));
  } finally {
    await handle.close();
  }
  const type = identifyMedia(head.subarray(0, read));
  if (!type) throw new MediaRejectedError(`is not an accepted ${kind} file (WAV, MP3, FLAC, OGG, MP4/M4A, WebM${kind === 'video' ? ', MOV' : ''}) by its content`);
  if (!type.kinds.includes(kind)) throw new MediaRejectedError(`is a ${type.container} file, which holds no ${kind}`);
  if (type.container === 'mp4' || type.container === 'mov') {
    // music-metadata times audio tracks only; the movie header gives the duration of any file, and the frame rate.
    const mp4 = await readMp4Facts(path);
    if (kind === 'video' && !mp4.hasVideo) throw new MediaRejectedError('is an MP4 file without a video track');
    if (kind === 'video') return timed({ type, durationS: mp4.durationS, sampleRate: null, fps: mp4.fps, channels: null });
  }
  let format: Awaited<ReturnType<typeof parseStream>>['format'];
  // The parser is chosen by the sniffed type, never by the file's name (parseFile would go by the extension).
  const stream = createReadStream(path);
  try {
    ({ format } = await parseStream(stream, { mimeType: type.mime, size: (await handleSize(path)) }, { duration: true, skipCovers: true }));
  } catch (err) {
    throw new MediaRejectedError(`could not be read as ${type.container}: ${(err as Error).message}`);
  } finally {
    stream.destroy();
  }
  const video = format.trackInfo?.find((t) => t.video);
  const duration = typeof format.duration === 'number' && Number.isFinite(format.duration) ? Math.round(format.duration * 1000) / 1000 : null;
  const mime = kind === 'audio' && type.container === 'webm' ? 'audio/webm' : kind === 'audio' && type.container === 'mp4' ? 'audio/mp4' : type.mime;
  return timed({
    type: { ...type, mime },
    durationS: duration,
    sampleRate: format.sampleRate ?? null,
    fps: frameRate(video?.video as { frameRate?: number } | undefined),
    channels: format.numberOfChannels ?? null,
  });
}

/**
 * A clip whose length its headers do not give (a truncated or damaged file) is refused: it could not be played, and
 * its time segments could not be checked against it.
 */
function timed(probed: ProbedMedia): ProbedMedia {
  if (probed.durationS === null || !(probed.durationS > 0)) {
    throw new MediaRejectedError(`has no readable duration: the ${probed.type.container} file is truncated or damaged`);
  }
  return probed;
}

function frameRate(video: { frameRate?: number } | undefined): number | null {
  return typeof video?.frameRate === 'number' && video.frameRate > 0 ? video.frameRate : null;
}

const handleSize = async (path: string) => (await stat(path)).size;
