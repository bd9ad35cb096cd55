/**
 * Annotation create over keep-alive (issue 2): autocannon POSTs bbox annotations to one image of a server running as
 * its own process, on the embedded defaults (SQLite). Target: ≥ 5,000 requests/s with p99 < 20 ms.
 * Usage: npx tsx bench/annotations.ts [seconds=10] [connections=32] [runs=3]
 */
import autocannon from 'autocannon';
import { median, startServer } from './lib/server.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 32);
const runs = Number(process.argv[4] ?? 3);

const server = await startServer();
try {
  const project = await server.api('POST', '/api/projects', { name: 'annotation bench' });
  const cls = await server.api('POST', `/api/projects/${project.id}/classes`, { name: 'box' });
  const imageId = await server.uploadImage(project.id);
  const body = JSON.stringify({ class_id: cls.id, annotation_type: 'bbox', geometry: { x: 10, y: 20, width: 100, height: 80 } });

  const results: { rps: number; p99: number; p50: number; errors: number }[] = [];
  for (let run = 0; run < runs; run++) {
    const result = await autocannon({
      url: `${server.url}/api/images/${imageId}/annotations`,
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body,
      connections,
      duration: seconds,
    });
    results.push({ rps: result.requests.average, p99: result.latency.p99, p50: result.latency.p50, errors: result.non2xx + result.errors });
  }
  console.log(`| run | requests/s | p50 ms | p99 ms | non-2xx + errors |`);
  console.log(`|---|---|---|---|---|`);
  results.forEach((r, i) => console.log(`| ${i + 1} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} |`));
  console.log(`\nmedian: ${median(results.map((r) => r.rps)).toFixed(0)} requests/s, p99 ${median(results.map((r) => r.p99))} ms ` +
    `(target ≥ 5,000 requests/s, p99 < 20 ms; ${connections} connections, ${seconds} s per run)`);
} finally {
  await server.stop();
}
