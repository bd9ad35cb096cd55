#!/usr/bin/env node
// Runs the test files under test/ with node's test runner (TypeScript through tsx), each in its own Node process, two
// at a time; prints each file's report when it ends, then the slowest files and the totals.
//   node scripts/run-tests.mjs [substring ...] [--except substring ...] [--concurrency n]
// Substrings narrow the run to files whose path contains one of them (`images auth`); `--except` leaves out files
// whose path contains one. The tiers of .ci/run are named in package.json (test:units, test:app, test:processes, test:pages, test:training,
// test:databases, test:recovery);
// the PyTorch tier runs one file at a time: two trainers on two cores slowed each about tenfold.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

const SLOWEST = 10;

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'helpers' ? [] : find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const only = [];
const except = [];
let concurrency = 2;
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--except') except.push(process.argv[++i] ?? '');
  else if (process.argv[i] === '--concurrency') concurrency = Number(process.argv[++i]);
  else only.push(process.argv[i]);
}
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error('--concurrency takes a whole number of files, 1 or more');
  process.exit(1);
}
const files = find('test')
  .filter((f) => (only.length === 0 || only.some((x) => f.includes(x))) && !except.some((x) => x && f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${process.argv.slice(2).join(' ')}`);
  process.exit(1);
}

/** One file in its own process (the spec reporter's output kept whole, not interleaved with the other file's). */
function runFile(file) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', '--test-reporter=spec', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('close', (code, signal) => {
      const output = Buffer.concat(chunks).toString('utf8');
      const count = (name) => Number(output.match(new RegExp(`^ℹ ${name} (\\d+)$`, 'm'))?.[1] ?? 0);
      resolve({ file, ok: code === 0, code: code ?? signal, seconds: (performance.now() - started) / 1000, output, pass: count('pass'), fail: count('fail') + count('cancelled'), skipped: count('skipped') });
    });
  });
}

const started = performance.now();
const results = [];
let next = 0;
async function worker() {
  while (next < files.length) {
    const result = await runFile(files[next++]);
    results.push(result);
    process.stdout.write(`\n── ${result.file} ${result.ok ? 'ok' : `FAILED (exit ${result.code})`}, ${result.seconds.toFixed(1)} s ──\n${result.output}`);
  }
}
await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));

const total = (key) => results.reduce((sum, r) => sum + r[key], 0);
const failed = results.filter((r) => !r.ok);
const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, SLOWEST);
const wall = (performance.now() - started) / 1000;
console.log(`\n── slowest ${slowest.length} of ${results.length} test files (seconds, ${concurrency} at a time) ──`);
for (const [i, r] of slowest.entries()) console.log(`${String(i + 1).padStart(3)}. ${r.seconds.toFixed(1).padStart(7)}  ${r.file}`);
console.log(
  `── ${results.length} files in ${wall.toFixed(0)} s on Node ${process.version}: tests ${total('pass')} passed, ${total('fail')} failed or cancelled, ${total('skipped')} skipped ──`,
);
if (failed.length > 0) console.log(`files that failed:\n${failed.map((r) => `  ${r.file} (exit ${r.code})`).join('\n')}`);
process.exit(failed.length > 0 ? 1 : 0);
