import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { JpegStreamSplitter } from './jpeg-stream.js';

/**
 * FFmpeg and ffprobe as child processes (Debian's `ffmpeg` package installs both). Paths come from the config; a
 * missing program is FfmpegMissingError, so the server can say what to install instead of failing obscurely.
 */
export interface FfmpegPaths {
  readonly ffmpeg: string;
  readonly ffprobe: string;
}

export class FfmpegMissingError extends Error {
  constructor(program: string) {
    super(`${program} is not installed on the server: install FFmpeg (Debian/Ubuntu: apt-get install ffmpeg) or set FFMPEG_PATH and FFPROBE_PATH`);
  }
}

/** A file FFmpeg could not read as a video. */
export class VideoUnreadableError extends Error {}

export interface VideoFacts {
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  readonly frameCount: number;
  readonly durationS: number;
  /** The first frame's presentation time, subtracted from every frame's timestamp. */
  readonly startS: number;
}

interface Run {
  stdout: string;
  stderr: string;
  code: number | null;
}

function run(program: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    child.on('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? new FfmpegMissingError(program) : err));
    child.on('close', (code) => resolve({ stdout, stderr, code }));
  });
}

/** Throws FfmpegMissingError unless both programs answer. */
export async function assertFfmpeg(paths: FfmpegPaths): Promise<void> {
  for (const program of [paths.ffprobe, paths.ffmpeg]) await run(program, ['-version']);
}

const rate = (text: string | undefined): number => {
  const [n, d] = (text ?? '').split('/').map(Number);
  return d > 0 && n > 0 ? n / d : 0;
};

/** The first video stream's size, frame rate, frame count (its packets, counted) and duration. */
export async function probeVideo(paths: FfmpegPaths, file: string): Promise<VideoFacts> {
  const result = await run(paths.ffprobe, [
    '-v', 'error', '-select_streams', 'v:0', '-count_packets',
    '-show_entries', 'stream=width,height,avg_frame_rate,r_frame_rate,nb_read_packets,duration,start_time:format=duration',
    '-of', 'json', file,
  ]);
  if (result.code !== 0) throw new VideoUnreadableError(`is not a readable video: ${lastLine(result.stderr, file)}`);
  const parsed = JSON.parse(result.stdout) as { streams?: Record<string, string | number>[]; format?: { duration?: string } };
  const stream = parsed.streams?.[0];
  if (!stream) throw new VideoUnreadableError('has no video stream');
  const fps = rate(String(stream.avg_frame_rate)) || rate(String(stream.r_frame_rate));
  const frameCount = Number(stream.nb_read_packets);
  const durationS = Number(stream.duration ?? parsed.format?.duration);
  const facts = { width: Number(stream.width), height: Number(stream.height), fps, frameCount, durationS, startS: Number(stream.start_time) || 0 };
  if (!(facts.width > 0 && facts.height > 0)) throw new VideoUnreadableError('has no frame size');
  if (!(frameCount > 0)) throw new VideoUnreadableError('has no frames');
  return { ...facts, durationS: Number.isFinite(durationS) && durationS > 0 ? durationS : fps > 0 ? frameCount / fps : 0 };
}

const SHOWINFO = /n:\s*(\d+)\s+pts:\s*-?\d+\s+pts_time:(-?[\d.e+-]+)/;

/** One decoded frame: its 0-based number in the video, its time from the start and its JPEG file's bytes. */
export interface DecodedFrame {
  readonly frame: number;
  readonly timestampS: number;
  readonly bytes: Buffer;
}

interface DecodeOptions {
  step: number;
  startS: number;
  range?: { fromS: number; toS: number; fps: number };
  signal?: AbortSignal;
  buffered?: number;
}

/**
 * FFmpeg's arguments: the frames as JPEG on stdout. No thumbnails: a second output (split → area scale → libwebp)
 * cost FFmpeg about 0.8 CPU-s per 300 frames at 1080p, so a frame's thumbnail is made when it is first asked for.
 */
function decoderArgs(file: string, options: DecodeOptions): string[] {
  const range = options.range;
  const trim = range ? `trim=start=${range.fromS + options.startS}:end=${range.toS + options.startS},` : '';
  // A clip: FFmpeg seeks (keeping the file's timestamps) to a second before it, so what comes before is not decoded,
  // and stops reading a second after it; the trim filter cuts it exactly.
  const seek = range ? Math.max(0, range.fromS - 1) : 0;
  const clip = range ? ['-ss', String(seek), '-copyts', '-t', String(range.toS + options.startS - seek + 1)] : [];
  // showinfo gives each frame's time; its per-plane checksums and statistics (a third of FFmpeg's work at 1080p) are off.
  const frames = `${trim}select='not(mod(n\\,${options.step}))',showinfo=checksum=0`;
  const jpeg = ['-fps_mode', 'passthrough', '-c:v', 'mjpeg', '-q:v', '2', '-f', 'image2pipe', 'pipe:1'];
  const head = ['-nostdin', '-hide_banner', '-nostats', '-loglevel', 'info', ...clip, '-i', file];
  return [...head, '-map', '0:v:0', '-vf', frames, ...jpeg];
}

/**
 * Decodes every `step`-th frame (0, step, 2·step, …) of the video into JPEG images (quality 2, straight from FFmpeg:
 * measured several times faster than PNG, at half the bytes), yielded while FFmpeg goes on decoding, so the caller's
 * work on a frame overlaps the decoding of the next ones. The images come through FFmpeg's stdout (no file is
 * written); each frame's presentation time comes from the showinfo filter on stderr. At most `buffered` images wait
 * for the caller: past that FFmpeg is paused by the pipe. Aborting the signal, or leaving the loop early, kills FFmpeg.
 *
 * `range` keeps the clip from `fromS` (included) to `toS` (excluded), seconds from the video's start (FFmpeg's trim
 * filter); its step counts from the clip's first frame, whose number is its time × `fps` (exact for a constant rate).
 */
export async function* decodeFrames(paths: FfmpegPaths, file: string, options: DecodeOptions): AsyncGenerator<DecodedFrame> {
  const buffered = options.buffered ?? 8;
  const range = options.range;
  const child = spawn(paths.ffmpeg, decoderArgs(file, options), { stdio: ['ignore', 'pipe', 'pipe'], signal: options.signal }) as ChildProcessByStdio<null, Readable, Readable>;
  const images: Buffer[] = [];
  const times: { index: number; timeS: number }[] = [];
  const splitter = new JpegStreamSplitter();
  const state: { failure?: unknown; exit?: number | null; wake?: () => void } = {};
  const wake = () => {
    const resolve = state.wake;
    state.wake = undefined;
    resolve?.();
  };
  let stderr = '';
  let partial = '';
  let firstFrame: number | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    try {
      images.push(...splitter.push(chunk));
    } catch (err) {
      state.failure ??= new VideoUnreadableError(`could not be decoded: ${(err as Error).message}`);
      child.kill('SIGKILL');
    }
    if (images.length >= buffered) child.stdout.pause();
    wake();
  });
  const onLine = (line: string) => {
    const match = line.includes('Parsed_showinfo') ? SHOWINFO.exec(line) : null;
    if (match) times.push({ index: Number(match[1]), timeS: Number(match[2]) });
    else if (stderr.length < 64 * 1024) stderr += line + '\n';
  };
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    lines.forEach(onLine);
    wake();
  });
  child.on('error', (err: NodeJS.ErrnoException) => {
    state.failure ??= err.code === 'ENOENT' ? new FfmpegMissingError(paths.ffmpeg) : err;
    wake();
  });
  child.on('close', (code) => {
    if (partial) onLine(partial);
    state.exit = code;
    wake();
  });
  try {
    for (;;) {
      if (state.failure) throw state.failure;
      if (images.length > 0 && times.length > 0) {
        const bytes = images.shift()!;
        const { index, timeS } = times.shift()!;
        if (images.length < buffered && child.stdout.isPaused()) child.stdout.resume();
        const time = Math.max(0, timeS - options.startS);
        firstFrame ??= range ? Math.round(time * range.fps) : 0;
        yield { frame: firstFrame + index * options.step, timestampS: Math.round(time * 1e6) / 1e6, bytes };
        continue;
      }
      if (state.exit !== undefined) {
        if (state.exit !== 0) throw new VideoUnreadableError(`could not be decoded: ${lastLine(stderr, file)}`);
        if (images.length > 0 || times.length > 0 || splitter.pending > 0) throw new VideoUnreadableError('could not be decoded: FFmpeg wrote a different number of images than it reported frames');
        return;
      }
      await new Promise<void>((resolve) => (state.wake = resolve));
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** FFmpeg's last message, without the server's path of the file. */
const lastLine = (text: string, file: string) =>
  text.split('\n').findLast((l) => l.trim() !== '')?.replaceAll(`${file}: `, '').replaceAll(file, 'the file').trim().slice(0, 300) ?? 'unknown error';
