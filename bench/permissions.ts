/**
 * What the teams machinery costs on the annotation-create path (issue 4): "Permission checks add < 1 ms p95 per
 * request" and "revision writing keeps annotation create ≥ 0.8× its throughput without revisions".
 *
 * Three servers run side by side, each its own process on SQLite, differing only in what `bench/lib/teams-bypass.ts`
 * (a bench-only preload; nothing in src/ reads its switch) turns off:
 *   full            everything on (the product as shipped)
 *   no-permissions  project permission checks and the assignment scope pass without looking anything up
 *   no-revisions    annotation writes record no revision
 * The caller is the most expensive kind for the checks: an annotator (a project member, not the owner) in an
 * assigned-only project, creating bbox annotations on an image assigned to them — so every request looks up the
 * membership and the assignment. Soft-lock checks stay on everywhere.
 *
 * The machine this runs on may be shared, and load from elsewhere comes in bursts of seconds, so modes are never
 * measured one after another: per round, the three servers are loaded by autocannon at the same time (each with
 * `connections` keep-alive connections for `seconds`; each server then gets CPU in proportion to its cost per request,
 * and a burst hits all three alike), then `latencyRequests` sequential POSTs per server are sent one request at a time
 * to each server in turn (one keep-alive connection each, no queueing, so p95 is the request's own cost under the same
 * conditions for every mode). Medians over rounds; every ratio compares modes measured in the same window.
 * Usage: npx tsx bench/permissions.ts [seconds=5] [connections=16] [rounds=5] [latencyRequests=1000]
 */
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { median, percentile, startServer, type BenchServer } from './lib/server.js';

const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 16);
const rounds = Number(process.argv[4] ?? 5);
const latencyRequests = Number(process.argv[5] ?? 1000);

const MODES = ['full', 'no-permissions', 'no-revisions'] as const;
type Mode = (typeof MODES)[number];
const BYPASS: Record<Mode, string> = { full: '', 'no-permissions': 'permissions', 'no-revisions': 'revisions' };
const preload = fileURLToPath(new URL('./lib/teams-bypass.ts', import.meta.url));

interface Target {
  server: BenchServer;
  url: string;
  token: string;
  body: string;
}

/** A server in `mode` with an assigned-only project, an annotator member, an image assigned to them and a class. */
async function prepare(mode: Mode): Promise<Target> {
  const server = await startServer({
    // tsx first, so the TypeScript preload can load; the server's own `--import tsx` then finds it loaded.
    NODE_OPTIONS: `--import tsx --import ${preload}`,
    BENCH_BYPASS: BYPASS[mode],
  });
  const project = await server.api('POST', '/api/projects', { name: `permissions bench (${mode})`, assigned_only: true });
  const cls = await server.api('POST', `/api/projects/${project.id}/classes`, { name: 'box' });
  const imageId = await server.uploadImage(project.id);
  const email = 'annotator@versa.local';
  const password = 'bench-password';
  const user = await server.api('POST', '/api/auth/register', { email, password });
  await server.api('POST', `/api/projects/${project.id}/members`, { user_id: user.id, role: 'annotator' });
  await server.api('POST', `/api/projects/${project.id}/assignments`, { user_id: user.id, image_ids: [imageId] });
  const { token } = await server.api('POST', '/api/auth/login', { email, password });
  const body = JSON.stringify({ class_id: cls.id, annotation_type: 'bbox', geometry: { x: 10, y: 20, width: 100, height: 80 } });
  const url = `${server.url}/api/images/${imageId}/annotations`;
  // Warm up (prepared statements, JIT) and prove the request passes in this mode.
  for (let i = 0; i < 200; i++) await post(url, token, body);
  // The switch took: revisions were written exactly when they should be.
  const history = await fetch(`${server.url}/api/images/${imageId}/revisions?limit=1`, { headers: { authorization: `Bearer ${server.token}` } });
  const written = Number(history.headers.get('x-total-count'));
  if (written !== (mode === 'no-revisions' ? 0 : 200)) throw new Error(`${mode}: ${written} revisions after 200 creates`);
  return { server, url, token, body };
}

async function post(url: string, token: string, body: string): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
  await res.arrayBuffer();
  if (res.status !== 201) throw new Error(`POST ${url} → ${res.status}`);
}

async function throughput(t: Target): Promise<{ rps: number; errors: number }> {
  const result = await autocannon({
    url: t.url,
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    body: t.body,
    connections,
    duration: seconds,
  });
  return { rps: result.requests.average, errors: result.non2xx + result.errors };
}

/** Sequential requests, one to each server in turn (rotating which goes first), timed per request. */
async function interleavedLatencies(order: readonly Mode[]): Promise<Record<Mode, number[]>> {
  const times: Record<Mode, number[]> = { full: [], 'no-permissions': [], 'no-revisions': [] };
  for (let i = 0; i < latencyRequests; i++) {
    for (let j = 0; j < order.length; j++) {
      const mode = order[(i + j) % order.length];
      const t = targets[mode];
      const start = performance.now();
      await post(t.url, t.token, t.body);
      times[mode].push(performance.now() - start);
    }
  }
  return times;
}

const targets = {} as Record<Mode, Target>;
try {
  for (const mode of MODES) targets[mode] = await prepare(mode);
  const rps: Record<Mode, number[]> = { full: [], 'no-permissions': [], 'no-revisions': [] };
  const p50: Record<Mode, number[]> = { full: [], 'no-permissions': [], 'no-revisions': [] };
  const p95: Record<Mode, number[]> = { full: [], 'no-permissions': [], 'no-revisions': [] };
  let errors = 0;
  for (let round = 0; round < rounds; round++) {
    // Rotate the order so no mode always runs first (or right after a noisy neighbour).
    const order = MODES.map((_, i) => MODES[(i + round) % MODES.length]);
    const runs = await Promise.all(order.map((mode) => throughput(targets[mode])));
    order.forEach((mode, i) => {
      rps[mode].push(runs[i].rps);
      errors += runs[i].errors;
    });
    const times = await interleavedLatencies(order);
    for (const mode of MODES) {
      p50[mode].push(percentile(times[mode], 50));
      p95[mode].push(percentile(times[mode], 95));
    }
  }
  const m = (values: number[]) => median(values);
  console.log(`| server | requests/s (${connections} conn. each, all loaded together) | vs full | sequential p50 ms | sequential p95 ms |`);
  console.log('|---|---|---|---|---|');
  for (const mode of MODES) {
    console.log(`| ${mode} | ${m(rps[mode]).toFixed(0)} | ${(m(rps[mode]) / m(rps.full)).toFixed(2)}× | ${m(p50[mode]).toFixed(3)} | ${m(p95[mode]).toFixed(3)} |`);
  }
  const checkCost = m(p95.full) - m(p95['no-permissions']);
  const perRound = p95.full.map((v, i) => (v - p95['no-permissions'][i]).toFixed(3)).join(', ');
  const p50Cost = m(p50.full) - m(p50['no-permissions']);
  console.log(`\npermission checks add ${checkCost.toFixed(3)} ms to sequential p95 (per round: ${perRound}; target < 1 ms) ` +
    `and ${p50Cost.toFixed(3)} ms to p50;`);
  console.log(`throughput with them is ${(m(rps.full) / m(rps['no-permissions'])).toFixed(2)}× without.`);
  console.log(`revision writing: annotation create at ${(m(rps.full) / m(rps['no-revisions'])).toFixed(2)}× the throughput without revisions ` +
    `(per round: ${rps.full.map((v, i) => (v / rps['no-revisions'][i]).toFixed(2)).join(', ')}; target ≥ 0.8×).`);
  console.log(`${rounds} rounds × (${seconds} s of autocannon on all three at once + ${latencyRequests} interleaved sequential requests per server); non-2xx + errors: ${errors}.`);
} finally {
  await Promise.all(Object.values(targets).map((t) => t.server.stop()));
}
