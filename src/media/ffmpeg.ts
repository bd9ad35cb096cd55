import { spawn } from 'node:child_process';

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

/** One decoded frame: its 0-based number in the video, its time from the start and its JPEG file. */
export interface DecodedFrame {
  readonly frame: number;
  readonly timestampS: number;
  readonly path: string;
}

interface Run {
  stdout: string;
  stderr: string;
  code: number | null;
}

function run(program: string, args: string[], signal?: AbortSignal, onStderrLine?: (line: string) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'], signal });
    let stdout = '';
    let stderr = '';
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (!onStderrLine) {
        if (stderr.length < 64 * 1024) stderr += chunk;
        return;
      }
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        onStderrLine(line);
        if (!line.includes('showinfo') && stderr.length < 64 * 1024) stderr += line + '\n';
      }
    });
    child.on('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? new FfmpegMissingError(program) : err));
    child.on('close', (code) => {
      if (partial && onStderrLine) onStderrLine(partial);
      resolve({ stdout, stderr, code });
    });
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

/**
 * Decodes every `step`-th frame (0, step, 2·step, …) of the video into JPEG files `outDir/000001.jpg`, … (quality 2,
 * straight from FFmpeg: measured several times faster than PNG, at half the bytes) and reads each frame's presentation
 * time from the showinfo filter. `onFrame` sees the count decoded so far. Aborting the signal kills FFmpeg.
 */
export async function extractFrames(
  paths: FfmpegPaths,
  file: string,
  outDir: string,
  options: { step: number; startS: number; signal?: AbortSignal; onFrame?: (decoded: number) => void },
): Promise<DecodedFrame[]> {
  const frames: DecodedFrame[] = [];
  const result = await run(paths.ffmpeg, [
    '-nostdin', '-hide_banner', '-loglevel', 'info', '-i', file, '-map', '0:v:0',
    '-vf', `select='not(mod(n\\,${options.step}))',showinfo`, '-fps_mode', 'passthrough', '-q:v', '2', '-f', 'image2',
    `${outDir}/%06d.jpg`,
  ], options.signal, (line) => {
    const match = line.includes('Parsed_showinfo') ? SHOWINFO.exec(line) : null;
    if (!match) return;
    const index = Number(match[1]);
    const time = Math.max(0, Number(match[2]) - options.startS);
    frames.push({ frame: index * options.step, timestampS: Math.round(time * 1e6) / 1e6, path: `${outDir}/${String(index + 1).padStart(6, '0')}.jpg` });
    options.onFrame?.(frames.length);
  });
  if (result.code !== 0) throw new VideoUnreadableError(`could not be decoded: ${lastLine(result.stderr, file)}`);
  return frames;
}

/** FFmpeg's last message, without the server's path of the file. */
const lastLine = (text: string, file: string) =>
  text.split('\n').findLast((l) => l.trim() !== '')?.replaceAll(`${file}: `, '').replaceAll(file, 'the file').trim().slice(0, 300) ?? 'unknown error';
