#!/usr/bin/env node
// Part of the layer rule (npm run layers): no two parts of src/ import each other, directly or round a loop. A part
// is a module (src/modules/<name>) or a top-level folder (src/db, src/http, …). dependency-cruiser finds cycles
// between files; this collapses its graph to parts (its --collapse) and fails on any cycle between them.
import { execFileSync } from 'node:child_process';

const bin = 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs';
const json = execFileSync(process.execPath, [bin, 'src', '--config', '.dependency-cruiser.cjs', '--collapse', '^src/(modules/[^/]+|[^/]+)/', '--output-type', 'json'], {
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
  stdio: ['ignore', 'pipe', 'inherit'],
});
const graph = new Map();
for (const m of JSON.parse(json).modules) {
  // module-deps.ts is the composition root's contract with every module (type-only): not a part of its own.
  if (!m.source.startsWith('src/') || m.source === 'src/modules/') continue;
  graph.set(m.source, new Set(m.dependencies.map((d) => d.resolved).filter((r) => r.startsWith('src/') && r !== m.source && r !== 'src/modules/')));
}
// Tarjan's strongly connected components: every component of more than one part is a cycle.
let next = 0;
const index = new Map(), low = new Map(), stack = [], on = new Set(), cycles = [];
const visit = (v) => {
  index.set(v, next); low.set(v, next++); stack.push(v); on.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
    else if (on.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const part = [];
    let w;
    do { w = stack.pop(); on.delete(w); part.push(w); } while (w !== v);
    if (part.length > 1) cycles.push(part.sort());
  }
};
for (const v of graph.keys()) if (!index.has(v)) visit(v);
if (cycles.length > 0) {
  for (const c of cycles) {
    console.error(`  error module-cycle: ${c.join(' ↔ ')}`);
    for (const a of c) for (const b of graph.get(a)) if (c.includes(b)) console.error(`    ${a} → ${b}`);
  }
  console.error(`\nx ${cycles.length} cycle(s) between parts of src/`);
  process.exit(1);
}
console.log(`✔ no cycles between the ${graph.size} parts of src/ (modules and top-level folders)`);
