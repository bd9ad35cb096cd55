import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the boxes of trackingVideo are on frame f (10 fps, 160 × 120). */
export const RED_AT = (f: number) => ({ x: 10 + 4 * f, y: 20, width: 24, height: 24 });
export const GREEN_AT = (f: number) => ({ x: 126 - 4 * f, y: 70, width: 24, height: 24 });

/**
 * An H.264 MP4 made by FFmpeg for the tracker: on black, a pure red box moving right and a pure green one moving left,
 * 4 px a frame each, for 2 s at 10 fps (20 frames, 160 × 120) — what the colour test detectors find, one box a class.
 */
export function trackingVideo(): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'versa-tracking-'));
  try {
    const file = join(dir, 'two-boxes.mp4');
    execFileSync('ffmpeg', [
      '-v', 'error', '-y', '-f', 'lavfi', '-i',
      // overlay evaluates its position on every frame (drawbox's `t` is NaN on FFmpeg 5.1 and draws nothing).
      'color=c=black:size=160x120:rate=10:duration=2[bg];color=c=0xFF0000:size=24x24:rate=10[r];color=c=0x00FF00:size=24x24:rate=10[g];'
        + "[bg][r]overlay=x='10+t*40':y=20:shortest=1[a];[a][g]overlay=x='126-t*40':y=70:shortest=1",
      '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-qp', '0', file,
    ]);
    return readFileSync(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
