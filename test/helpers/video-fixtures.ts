import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * An H.264 MP4 made by FFmpeg: `testsrc` at `size` and `rate` for `seconds`, with a red box moving right 20 px a second
 * (so frames differ and a tracker has something to follow). Written in a temporary folder and read back.
 */
export function testVideo(options: { size?: string; rate?: number; seconds?: number } = {}): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'versa-video-'));
  try {
    const file = join(dir, 'moving-box.mp4');
    execFileSync('ffmpeg', [
      '-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=${options.size ?? '160x120'}:rate=${options.rate ?? 10}`, '-t', String(options.seconds ?? 2),
      '-vf', "drawbox=x='10+t*20':y=20:w=30:h=30:color=red@1:t=fill", '-pix_fmt', 'yuv420p', '-c:v', 'libx264', file,
    ]);
    return readFileSync(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
