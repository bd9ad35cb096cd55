/**
 * Video into frames (issue 26): a generated H.264 video (FFmpeg `testsrc` with a moving box) decoded (a) by `ffmpeg`
 * alone writing JPEG frames (quality 2, the service's setting), (b) by `ffmpeg` alone writing PNG frames (the other
 * way the frames could reach the ingest path), and (c) through the service: upload, then the decoding job (FFmpeg to
 * JPEG, each frame checked from its JPEG header, hashed and written, all rows in one transaction), timed from the 202
 * to `ready`. Rounds take turns (a, b, c); medians are printed. The frames' WebP thumbnails are no longer made by the
 * decoding but on their first request, so their cost is reported beside it: the time until the first frame's
 * thumbnail is served once the video is `ready`, then a grid page (the first `page=100` frames' thumbnails, asked all
 * at once as a browser would) with its wall and CPU seconds, and the CPU per thumbnail (all of a video's thumbnails,
 * should every one be looked at, cost that × the frame count; it is not part of the ratio, as the bare baseline
 * makes none). Beside the wall
 * times, the CPU seconds each side spent (this process and its children, FFmpeg included, from /proc/self/stat): on
 * a machine shared with other work the wall times swing, the CPU seconds much less. The service's line also gives
 * the CPU this process spent alone (Node: ingest, files, rows, claims), per frame. `png=0` leaves out (b).
 * Usage: npx tsx bench/video-frames.ts [seconds=5] [size=1280x720] [rate=30] [rounds=3] [png=1] [page=100]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inProcessApp, median } from './lib/server.js';
import { multipart } from '../test/helpers/multipart.js';

const seconds = Number(process.argv[2] ?? 5);
const size = process.argv[3] ?? '1280x720';
const rate = Number(process.argv[4] ?? 30);
const rounds = Number(process.argv[5] ?? 3);
const withPng = process.argv[6] !== 'png=0';
const page = Number(process.argv[7] ?? 100);

/** CPU seconds of this process alone (`self`: utime, stime) or with the children it has waited for (`all`: FFmpeg's
 * too; cutime, cstime), from /proc/self/stat in 10 ms ticks. */
function cpuOf(which: 'self' | 'all'): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ').map(Number);
  return (fields[11] + fields[12] + (which === 'all' ? fields[13] + fields[14] : 0)) / 100;
}

const dir = await mkdtemp(join(tmpdir(), 'versa-bench-video-'));
const source = join(dir, 'in.mp4');
const ffmpeg = (args: string[]) => {
  const result = spawnSync('ffmpeg', ['-v', 'error', '-y', ...args]);
  if (result.status !== 0) throw new Error(result.stderr.toString());
};
ffmpeg(['-f', 'lavfi', '-i', `testsrc=size=${size}:rate=${rate}`, '-t', String(seconds), '-vf', "drawbox=x='10+t*40':y=40:w=120:h=120:color=red@1:t=fill", '-pix_fmt', 'yuv420p', '-c:v', 'libx264', source]);
const frames = seconds * rate;
console.log(`${seconds} s of ${size} at ${rate} fps (${frames} frames), ${rounds} rounds\n`);

async function bare(ext: 'jpg' | 'png'): Promise<{ s: number; mb: number; cpu: number }> {
  const out = join(dir, ext);
  await rm(out, { recursive: true, force: true });
  await mkdir(out);
  const [start, cpu] = [performance.now(), cpuOf('all')];
  ffmpeg(['-i', source, ...(ext === 'jpg' ? ['-q:v', '2'] : []), join(out, `%06d.${ext}`)]);
  const s = (performance.now() - start) / 1000;
  const spent = cpuOf('all') - cpu;
  let bytes = 0;
  for (const f of await readdir(out)) bytes += (await readFile(join(out, f))).length;
  return { s, mb: bytes / 1e6, cpu: spent };
}

const { app, authorization, close } = await inProcessApp('video');
const project = (await app.inject({ method: 'POST', url: '/api/projects', headers: { authorization }, payload: { name: 'bench' } })).json();
const video = await readFile(source);
interface Thumbnails { firstS: number; pageS: number; pageCpu: number }
async function service(): Promise<{ s: number; cpu: number; node: number; thumbnails: Thumbnails }> {
  const body = multipart([{ name: 'file', filename: 'in.mp4', data: video }]);
  const res = await app.inject({ method: 'POST', url: `/api/projects/${project.id}/videos`, headers: { ...body.headers, authorization }, payload: body.payload });
  if (res.statusCode !== 202) throw new Error(res.body);
  const [start, cpu, node] = [performance.now(), cpuOf('all'), cpuOf('self')];
  const id = res.json().id;
  for (;;) {
    const v = (await app.inject({ method: 'GET', url: `/api/videos/${id}`, headers: { authorization } })).json();
    if (v.status === 'failed') throw new Error(v.error);
    if (v.status === 'ready') break;
    // Every 100 ms: at every 20 ms the bench's own GETs were a third of the Node CPU it reported for the service.
    await new Promise((r) => setTimeout(r, 100));
  }
  const s = (performance.now() - start) / 1000;
  const spent = cpuOf('all') - cpu;
  const nodeSpent = cpuOf('self') - node;
  const thumbnails = await thumbnailsOf(id);
  await app.inject({ method: 'DELETE', url: `/api/videos/${id}`, headers: { authorization } });
  return { s, cpu: spent, node: nodeSpent, thumbnails };
}

/** The frames' thumbnails as the grid asks for them: the first frame's alone, then a page of them at once. */
async function thumbnailsOf(videoId: number): Promise<Thumbnails> {
  const frames = (await app.inject({ method: 'GET', url: `/api/projects/${project.id}/images?video_id=${videoId}&limit=${page + 1}`, headers: { authorization } })).json() as { id: number }[];
  const thumbnail = async (imageId: number) => {
    const res = await app.inject({ method: 'GET', url: `/api/images/${imageId}/thumbnail`, headers: { authorization } });
    if (res.statusCode !== 200 || res.headers['content-type'] !== 'image/webp') throw new Error(`thumbnail ${imageId}: ${res.statusCode}`);
  };
  let start = performance.now();
  await thumbnail(frames[0].id);
  const firstS = (performance.now() - start) / 1000;
  [start] = [performance.now()];
  const cpu = cpuOf('all');
  await Promise.all(frames.slice(1).map((f) => thumbnail(f.id)));
  return { firstS, pageS: (performance.now() - start) / 1000, pageCpu: cpuOf('all') - cpu };
}

const times = { jpg: [] as number[], png: [] as number[], service: [] as number[] };
const thumbs: Thumbnails[] = [];
const cpu = { jpg: [] as number[], service: [] as number[], node: [] as number[] };
const sizes = { jpg: 0, png: 0 };
for (let r = 0; r < rounds; r++) {
  const jpg = await bare('jpg');
  const png = withPng ? await bare('png') : undefined;
  times.jpg.push(jpg.s);
  cpu.jpg.push(jpg.cpu);
  sizes.jpg = jpg.mb;
  if (png) {
    times.png.push(png.s);
    sizes.png = png.mb;
  }
  const ran = await service();
  times.service.push(ran.s);
  cpu.service.push(ran.cpu);
  cpu.node.push(ran.node);
  thumbs.push(ran.thumbnails);
  console.log(`round ${r + 1}: ffmpeg→JPEG ${jpg.s.toFixed(2)} s (CPU ${jpg.cpu.toFixed(2)} s), ${png ? `ffmpeg→PNG ${png.s.toFixed(2)} s, ` : ''}service ${ran.s.toFixed(2)} s (CPU ${ran.cpu.toFixed(2)} s, Node ${ran.node.toFixed(2)} s of it): ${(jpg.s / ran.s).toFixed(2)}× wall, ${(jpg.cpu / ran.cpu).toFixed(2)}× CPU; then thumbnails: first ${(ran.thumbnails.firstS * 1000).toFixed(0)} ms, ${page} more ${ran.thumbnails.pageS.toFixed(2)} s (CPU ${ran.thumbnails.pageCpu.toFixed(2)} s)`);
}
const fps = (s: number) => (frames / s).toFixed(0);
console.log(`\nmedians: ffmpeg→JPEG ${median(times.jpg).toFixed(2)} s (${fps(median(times.jpg))} frames/s, ${sizes.jpg.toFixed(1)} MB; CPU ${median(cpu.jpg).toFixed(2)} s)`);
if (withPng) console.log(`         ffmpeg→PNG  ${median(times.png).toFixed(2)} s (${fps(median(times.png))} frames/s, ${sizes.png.toFixed(1)} MB)`);
console.log(`         service     ${median(times.service).toFixed(2)} s (${fps(median(times.service))} frames/s; CPU ${median(cpu.service).toFixed(2)} s, Node ${median(cpu.node).toFixed(2)} s = ${((median(cpu.node) / frames) * 1000).toFixed(1)} ms a frame): ${(median(times.jpg) / median(times.service)).toFixed(2)}× ffmpeg→JPEG alone by wall time, ${(median(cpu.jpg) / median(cpu.service)).toFixed(2)}× by CPU`);
const perThumb = median(thumbs.map((t) => t.pageCpu / page));
console.log(`thumbnails, made on first request once the video is ready (not in the ratio): the first frame's served in ${(median(thumbs.map((t) => t.firstS)) * 1000).toFixed(0)} ms; a page of ${page} at once ${median(thumbs.map((t) => t.pageS)).toFixed(2)} s (CPU ${median(thumbs.map((t) => t.pageCpu)).toFixed(2)} s = ${(perThumb * 1000).toFixed(1)} ms a thumbnail; all ${frames} would be ${(perThumb * frames).toFixed(1)} CPU-s)`);
await close();
await rm(dir, { recursive: true, force: true });
