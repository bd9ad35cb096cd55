/// <reference lib="dom" />
/**
 * Actions per image (issues 28 and 30): the clicks, drags and keys a person needs in the editor (headless Chromium,
 * the production bundle) to label N images, by hand against with a model's suggestions, on the same generated data.
 *
 * The data is made here: 256 × 256 images of coloured squares, classes red, green, blue and orange. The model is the
 * test suite's generated ONNX detector (test/helpers/onnx) that knows red and green only, so its suggestions carry
 * each kind of error a real one does: an orange square is found as red (a wrong class: one class key), blue squares
 * are missed (drawn: class key, drag), a small green speck that is not an object is found as green (a false
 * positive: N), and red and green squares are right (Y). Suggestions come from one auto-annotate run over the project
 * before labelling (counted apart, once). By hand, each ground-truth box is a class key (when the class changes) and
 * a drag. Either way the next image is one key (D). The labels saved are checked against the ground truth (IoU 0.5,
 * same class) at the end, so a run that labels wrongly says so.
 *   npx tsx bench/actions-per-image.ts [images]      (default 10)
 *   npx tsx bench/actions-per-image.ts --smoke       (5 images: checks that it runs, under a minute)
 */
import { loadavg } from 'node:os';
import type { Page } from 'playwright-core';
import { buildYoloModel } from '../test/helpers/onnx/yolo-models.js';
import { squaresPng, type Square } from '../test/helpers/onnx/test-images.js';
import { ensureWebBuilt, launchBrowser, SKIP_REASON, startServer } from '../test/browser/browser-harness.js';

const SMOKE = process.argv.includes('--smoke');
const IMAGES = SMOKE ? 5 : Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 10);
const SIZE = 256;
/** Project classes in hotkey order (1, 2, 3, 4). */
const CLASSES = ['red', 'green', 'blue', 'orange'] as const;
type ClassName = (typeof CLASSES)[number];
const COLOURS: Record<ClassName, [number, number, number]> = { red: [255, 0, 0], green: [0, 255, 0], blue: [0, 0, 255], orange: [255, 110, 0] };

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
interface Truth extends Box {
  cls: ClassName;
}
interface Generated {
  truth: Truth[];
  squares: Square[];
}

/** A seeded generator, so both modes and every run label the same images. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s ^ (s >>> 15), 2246822519) + 0x9e3779b9) >>> 0) / 2 ** 32);
}

/** Image i: one red or orange square, a green square or a green speck (not an object), maybe a blue square. */
function generate(i: number): Generated {
  const r = random(1000 + i);
  const cells = [[16, 16], [140, 16], [16, 140], [140, 140]].sort(() => r() - 0.5);
  const truth: Truth[] = [];
  const squares: Square[] = [];
  const place = (cls: ClassName, side: number, object: boolean) => {
    const [cx, cy] = cells.pop()!;
    const box = { x: cx + Math.floor(r() * 20), y: cy + Math.floor(r() * 20), width: side, height: side };
    squares.push({ ...box, colour: COLOURS[cls] });
    if (object) truth.push({ ...box, cls });
  };
  place(r() < 0.6 ? 'red' : 'orange', 50 + Math.floor(r() * 30), true);
  if (r() < 0.6) place('green', 50 + Math.floor(r() * 30), true);
  else if (r() < 0.6) place('green', 8, false);
  if (r() < 0.6) place('blue', 50 + Math.floor(r() * 30), true);
  return { truth, squares };
}

function iou(a: Box, b: Box): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  return (w * h) / (a.width * a.height + b.width * b.height - w * h);
}

/** The actions a person made, by kind. */
class Tally {
  keys = 0;
  drags = 0;
  clicks = 0;
  get total(): number {
    return this.keys + this.drags + this.clicks;
  }
}

/** The editor driven as a person would, every key and drag counted. */
class Person {
  constructor(
    private readonly page: Page,
    readonly tally: Tally,
  ) {}

  async key(key: string): Promise<void> {
    this.tally.keys++;
    await this.page.keyboard.press(key);
  }

  /**
   * Drags a box from image point (x, y) to (x + width, y + height), or the other way round when a message covers the
   * top-left corner (as a person would start where the canvas is clear).
   */
  async drag(box: Box): Promise<void> {
    this.tally.drags++;
    let from = await screenOf(this.page, box.x, box.y);
    let to = await screenOf(this.page, box.x + box.width, box.y + box.height);
    if (!(await this.page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.tagName === 'CANVAS', [from.x, from.y]))) [from, to] = [to, from];
    await this.page.mouse.move(from.x, from.y);
    await this.page.mouse.down();
    await this.page.mouse.move(to.x, to.y, { steps: 4 });
    await this.page.mouse.up();
  }
}

async function screenOf(page: Page, x: number, y: number): Promise<{ x: number; y: number }> {
  return page.evaluate(([ix, iy]) => {
    const c = window.__versaEditor!.controller;
    const r = c.canvas.getBoundingClientRect();
    return { x: r.left + c.tx + ix * c.scale, y: r.top + c.ty + iy * c.scale };
  }, [x, y]);
}

interface EditorShape {
  key: number;
  class_id: number;
  status: string;
  geometry: Box;
}

/** The open image's shapes in the editor and the selected one's key. */
function editorState(page: Page): Promise<{ imageId: number | null; selected: number | null; shapes: EditorShape[] }> {
  return page.evaluate(() => {
    const c = window.__versaEditor!.controller as unknown as { selectedKey: number | null; store: { items: Map<number, EditorShape> } | null };
    const shapes = c.store ? [...c.store.items].map(([key, a]) => ({ key, class_id: a.class_id, status: a.status, geometry: a.geometry })) : [];
    return { imageId: window.__versaEditor!.imageId(), selected: c.selectedKey, shapes };
  });
}

async function waitFor<T>(what: string, check: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Run {
  tally: Tally;
  decisions: { accepted: number; relabelled: number; rejected: number; drawn: number };
}

/**
 * Labels every image: the suggestions first (Tab to the first; Y when right, the class key when the class is wrong,
 * N when nothing is there), then what is still missing drawn (Esc first when a shape is still selected, the class key
 * when the class changes, a drag). By hand there are no suggestions: only the drawing.
 */
async function label(page: Page, person: Person, imageIds: number[], data: Generated[], classIds: Map<ClassName, number>): Promise<Run> {
  const decisions = { accepted: 0, relabelled: 0, rejected: 0, drawn: 0 };
  const nameOf = new Map([...classIds].map(([name, id]) => [id, name]));
  let current: ClassName | null = null;
  await person.key('b');
  for (const [i, imageId] of imageIds.entries()) {
    if (i > 0) await person.key('d');
    await waitFor('the image open', async () => (await editorState(page)).imageId === imageId);
    const truth = data[i].truth;
    const found = new Set<Truth>();
    let state = await editorState(page);
    if (state.shapes.some((s) => s.status === 'suggested')) {
      if (state.selected === null || state.shapes.find((s) => s.key === state.selected)?.status !== 'suggested') await person.key('Tab');
      for (;;) {
        state = await waitFor('a suggestion selected', async () => {
          const s = await editorState(page);
          const open = s.shapes.filter((x) => x.status === 'suggested');
          return (open.length === 0 || s.shapes.find((x) => x.key === s.selected)?.status === 'suggested') && s;
        });
        const selected = state.shapes.find((s) => s.key === state.selected && s.status === 'suggested');
        if (!selected) break;
        const match = truth.find((t) => !found.has(t) && iou(t, selected.geometry) >= 0.5);
        if (match) found.add(match);
        if (!match) {
          await person.key('n');
          decisions.rejected++;
        } else if (nameOf.get(selected.class_id) === match.cls) {
          await person.key('y');
          decisions.accepted++;
        } else {
          await person.key(String(CLASSES.indexOf(match.cls) + 1));
          decisions.relabelled++;
          current = match.cls;
        }
        await waitFor('the decision applied', async () => {
          const s = await editorState(page);
          const now = s.shapes.find((x) => x.key === selected.key);
          return (!now || now.status !== 'suggested') && s;
        });
        if (!(await editorState(page)).shapes.some((s) => s.status === 'suggested')) break;
      }
    }
    for (const t of truth.filter((x) => !found.has(x))) {
      if ((await editorState(page)).selected !== null) await person.key('Escape');
      if (current !== t.cls) {
        await person.key(String(CLASSES.indexOf(t.cls) + 1));
        current = t.cls;
      }
      const before = (await editorState(page)).shapes.length;
      await person.drag(t);
      await waitFor(`the box of image ${i} drawn (${JSON.stringify(t)})`, async () => (await editorState(page)).shapes.length > before);
      decisions.drawn++;
    }
  }
  return { tally: person.tally, decisions };
}

async function main(): Promise<void> {
  if (SKIP_REASON) {
    console.log(`skipped: ${SKIP_REASON}`);
    return;
  }
  const started = Date.now();
  const loadAtStart = loadavg().map((l) => l.toFixed(2)).join(', ');
  ensureWebBuilt();
  const server = await startServer();
  const browser = await launchBrowser();
  const page = browser.page;
  const base = server.baseUrl;
  const call = async <T>(method: 'get' | 'post', url: string, data?: object): Promise<T> => {
    const res = method === 'get' ? await page.request.get(base + url) : await page.request.post(base + url, { data: data ?? {} });
    if (res.status() >= 300) throw new Error(`${method} ${url}: ${res.status()} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const email = 'bench@example.com', password = 'correct horse battery';
  await call('post', '/api/auth/register', { email, password });
  await call('post', '/api/auth/login', { email, password });
  const data = Array.from({ length: IMAGES }, (_, i) => generate(i));

  /** A project with the generated images (and, with a model, its suggestions): its id, images and class ids. */
  const setUp = async (name: string, withModel: boolean) => {
    const project = await call<{ id: number }>('post', '/api/projects', { name, project_type: 'object_detection' });
    const classIds = new Map<ClassName, number>();
    for (const cls of CLASSES) classIds.set(cls, (await call<{ id: number }>('post', `/api/projects/${project.id}/classes`, { name: cls })).id);
    const imageIds: number[] = [];
    for (const [i, d] of data.entries()) {
      const png = await squaresPng(SIZE, SIZE, d.squares);
      const res = await page.request.post(`${base}/api/projects/${project.id}/images`, { multipart: { files: { name: `shapes-${i}.png`, mimeType: 'image/png', buffer: png } } });
      imageIds.push((await res.json()).images[0].id);
    }
    let suggestions = 0;
    if (withModel) {
      const model = await page.request.post(`${base}/api/projects/${project.id}/models/upload`, {
        multipart: { file: { name: 'red-green.onnx', mimeType: 'application/octet-stream', buffer: Buffer.from(buildYoloModel('v8', { width: 128, height: 128 }, ['red', 'green'])) }, name: 'red-green' },
      });
      if (model.status() !== 201) throw new Error(`model upload: ${await model.text()}`);
      const run = await call<{ created: number }>('post', `/api/projects/${project.id}/auto-annotate/yolo`, { model: (await model.json()).id, image_ids: imageIds, confidence: 0.25 });
      suggestions = run.created;
    }
    return { projectId: project.id, imageIds, classIds, suggestions };
  };

  /** Opens the first image and labels them all, then checks what was saved against the ground truth. */
  const runMode = async (name: string, withModel: boolean) => {
    const { projectId, imageIds, classIds, suggestions } = await setUp(name, withModel);
    await page.goto(`${base}/projects/${projectId}/annotate?image=${imageIds[0]}`);
    await waitFor('the editor', async () => (await page.evaluate(() => window.__versaEditor?.imageId() ?? null)) === imageIds[0], 60_000);
    await page.locator('canvas').first().focus().catch(() => undefined);
    const run = await label(page, new Person(page, new Tally()), imageIds, data, classIds);
    const nameOf = new Map([...classIds].map(([n, id]) => [id, n]));
    let correct = 0, wrong = 0;
    await waitFor('every label saved', async () => {
      correct = 0;
      wrong = 0;
      for (const [i, imageId] of imageIds.entries()) {
        const saved = await call<{ class_id: number; status: string; geometry: Box }[]>('get', `/api/images/${imageId}/annotations`);
        const accepted = saved.filter((a) => a.status === 'accepted');
        for (const t of data[i].truth) (accepted.some((a) => nameOf.get(a.class_id) === t.cls && iou(a.geometry, t) >= 0.5) ? correct++ : wrong++);
        wrong += Math.max(0, accepted.length - data[i].truth.length) + saved.filter((a) => a.status === 'suggested').length;
      }
      return wrong === 0;
    }).catch(() => undefined);
    return { ...run, suggestions, correct, wrong };
  };

  const hand = await runMode('By hand', false);
  const assisted = await runMode('With suggestions', true);
  await browser.close();
  await server.close();

  const boxes = data.reduce((n, d) => n + d.truth.length, 0);
  const per = (t: Tally) => (t.total / IMAGES).toFixed(2);
  const describe = (r: typeof hand) =>
    `${r.tally.total} actions (${r.tally.keys} keys, ${r.tally.drags} drags, ${r.tally.clicks} clicks) = ${per(r.tally)} per image; `
    + `accepted ${r.decisions.accepted}, relabelled ${r.decisions.relabelled}, rejected ${r.decisions.rejected}, drawn ${r.decisions.drawn}; `
    + `saved labels right ${r.correct}/${boxes}${r.wrong ? `, ${r.wrong} wrong or left over` : ''}`;
  const rows: [string, string][] = [
    ['mode', SMOKE ? 'smoke (checks that it runs; not a figure)' : 'full'],
    ['images / ground-truth boxes', `${IMAGES} / ${boxes}`],
    ['model', `generated red/green ONNX detector: ${assisted.suggestions} suggestions (one auto-annotate run, not counted per image)`],
    ['model on this data (IoU 0.5, class-aware)', `precision ${(assisted.decisions.accepted / Math.max(1, assisted.suggestions)).toFixed(2)}, recall ${(assisted.decisions.accepted / boxes).toFixed(2)}`],
    ['by hand', describe(hand)],
    ['with suggestions', describe(assisted)],
    ['ratio (with suggestions / by hand)', (assisted.tally.total / hand.tally.total).toFixed(2)],
    ['load average at start / end', `${loadAtStart} / ${loadavg().map((l) => l.toFixed(2)).join(', ')}`],
    ['wall time', `${((Date.now() - started) / 1000).toFixed(0)} s`],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
  if (hand.wrong || assisted.wrong) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
