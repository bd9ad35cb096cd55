/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { apiCaller, livePageSuite, screenshot, signInNewUser, SKIP_REASON, until } from './browser-harness.js';

/**
 * Every shape in the editor (issue 25): a skeleton placed point by point from its class's template, an ellipse, a
 * polyline, a point set, a box turned by key and by its rotation handle, a second part added to a polygon; a point's
 * visibility toggled by key; an attribute edited in the objects list; undo. The class's skeleton and attributes are set
 * in the classes panel first. Each checked as the API stored it.
 */
describe('the editor draws every shape', { skip: SKIP_REASON ?? false }, () => {
  const live = livePageSuite();
  const base = () => live.server.baseUrl;
  const call = apiCaller(() => live.page, base);

  interface Stored {
    id: number;
    annotation_type: string;
    geometry: Record<string, any>;
    attributes: Record<string, unknown>;
  }

  async function screenOf(page: Page, x: number, y: number): Promise<{ x: number; y: number }> {
    return page.evaluate(
      ([ix, iy]) => {
        const c = window.__versaEditor!.controller;
        const r = c.canvas.getBoundingClientRect();
        return { x: r.left + c.tx + ix * c.scale, y: r.top + c.ty + iy * c.scale };
      },
      [x, y],
    );
  }
  let signing: Promise<void> | null = null;
  /** Ada, signed in once for the suite. */
  const signedIn = () => (signing ??= signInNewUser(call, 'ada@example.com'));
  /** A click, and a drag in four steps, at image points. */
  const click = async (x: number, y: number) => {
    const p = await screenOf(live.page, x, y);
    await live.page.mouse.click(p.x, p.y);
  };
  const drag = async (from: [number, number], to: [number, number]) => {
    const a = await screenOf(live.page, ...from), b = await screenOf(live.page, ...to);
    await live.page.mouse.move(a.x, a.y);
    await live.page.mouse.down();
    await live.page.mouse.move(b.x, b.y, { steps: 4 });
    await live.page.mouse.up();
  };
  const near = (got: number[], want: number[], what: string) => got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1.5, `${what}: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`));
  /** A 400 × 300 image uploaded to the project; returns its id and a reader of its stored annotations. */
  async function upload(projectId: number) {
    const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: { r: 90, g: 110, b: 130 } } }).png().toBuffer();
    const res = await live.page.request.post(`${base()}/api/projects/${projectId}/images`, { multipart: { files: { name: 'street.png', mimeType: 'image/png', buffer: png } } });
    assert.equal(res.status(), 201, await res.text());
    const imageId = (await res.json()).images[0].id as number;
    const stored = async () => (await (await live.page.request.get(`${base()}/api/images/${imageId}/annotations`)).json()) as Stored[];
    const ofType = async (type: string) => (await stored()).filter((a) => a.annotation_type === type);
    return { imageId, stored, ofType };
  }
  async function openEditor(projectId: number, imageId: number): Promise<void> {
    await live.page.goto(`${base()}/projects/${projectId}/annotate?image=${imageId}`);
    await until('the editor', async () => (await live.page.evaluate(() => window.__versaEditor?.imageId() ?? null)) === imageId);
  }

  it('places a skeleton, ellipse, polyline, points, rotated box and a two-part polygon; toggles visibility; edits an attribute; undoes', async () => {
    const page = live.page;
    await signedIn();
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Shapes' })).id;
    const personId = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'person' })).id;

    // The class's skeleton and attributes, set on the project page ("Shapes").
    await page.goto(`${base()}/projects/${projectId}`);
    await page.getByRole('button', { name: 'Shapes of person' }).click();
    await page.getByLabel('Skeleton points').fill('nose, left_eye, right_eye');
    await page.getByLabel('Skeleton edges').fill('nose-left_eye, nose-right_eye');
    await page.getByLabel('Skeleton flip pairs').fill('left_eye-right_eye');
    await page.getByLabel('Attribute specs').fill('occluded: checkbox\npose: select standing | sitting');
    await page.getByRole('button', { name: 'Save shapes' }).click();
    const cls = await until('the class specs saved', async () => {
      const c = (await call<{ id: number; skeleton: unknown; attributes: unknown[] }[]>('get', `/api/projects/${projectId}/classes`)).find((x) => x.id === personId)!;
      return c.skeleton !== null && c;
    });
    assert.deepEqual(cls.skeleton, { points: ['nose', 'left_eye', 'right_eye'], edges: [[0, 1], [0, 2]], flip_pairs: [[1, 2]] });
    assert.deepEqual(cls.attributes, [{ name: 'occluded', type: 'checkbox' }, { name: 'pose', type: 'select', values: ['standing', 'sitting'] }]);
    const { imageId, stored, ofType } = await upload(projectId);
    await openEditor(projectId, imageId);

    // Keypoints: K, then the skeleton's points in order (the hint names the next); saved after the last one.
    await page.keyboard.press('k');
    assert.match(await page.getByTestId('tool-hint').innerText(), /nose \(1 of 3\)/);
    await click(50, 50);
    assert.match(await page.getByTestId('tool-hint').innerText(), /left_eye \(2 of 3\)/);
    await click(30, 40);
    await click(70, 40);
    const [skeleton] = await until('the skeleton saved', async () => (await ofType('keypoints'))[0] && (await ofType('keypoints')));
    assert.deepEqual(skeleton.geometry.points.map((p: number[]) => p[2]), [2, 2, 2]);
    skeleton.geometry.points.forEach((p: number[], i: number) => near(p.slice(0, 2), [[50, 50], [30, 40], [70, 40]][i], 'keypoint'));

    // Ellipse: O, drag from the centre outwards; R turns the selected ellipse by 5°.
    await page.keyboard.press('o');
    await drag([300, 60], [340, 80]);
    const [ellipse] = await until('the ellipse saved', async () => (await ofType('ellipse'))[0] && (await ofType('ellipse')));
    near([ellipse.geometry.cx, ellipse.geometry.cy, ellipse.geometry.rx, ellipse.geometry.ry], [300, 60, 40, 20], 'ellipse');
    await click(300, 60);
    await page.keyboard.press('r');
    await until('the ellipse turned 5°', async () => (await ofType('ellipse'))[0].geometry.rotation === 5);

    // Polyline: L, three clicks, Enter. Points: T, two clicks, Enter.
    await page.keyboard.press('l');
    for (const [x, y] of [[20, 150], [80, 160], [140, 150]]) await click(x, y);
    await page.keyboard.press('Enter');
    const [line] = await until('the polyline saved', async () => (await ofType('polyline'))[0] && (await ofType('polyline')));
    assert.equal(line.geometry.points.length, 3);
    near(line.geometry.points.flat(), [20, 150, 80, 160, 140, 150], 'polyline');
    await page.keyboard.press('t');
    await click(200, 150);
    await click(220, 160);
    await page.keyboard.press('Enter');
    const [dots] = await until('the points saved', async () => (await ofType('points'))[0] && (await ofType('points')));
    near(dots.geometry.points.flat(), [200, 150, 220, 160], 'points');

    // Box: B and drag; select it, R turns it 5°, then its rotation handle is dragged to the right of its centre: 90°.
    await page.keyboard.press('b');
    await drag([250, 150], [350, 200]);
    await until('the box saved', async () => (await ofType('bbox')).length === 1);
    await click(300, 175);
    await page.keyboard.press('r');
    await until('the box turned 5°', async () => (await ofType('bbox'))[0].geometry.rotation === 5);
    const handle = await page.evaluate(() => {
      const c = window.__versaEditor!.controller as unknown as { scale: number };
      // The rotation handle: 24 screen pixels above the top edge's middle, turned 5° about the centre.
      const r = 5 * Math.PI / 180, d = 25 + 24 / c.scale;
      return [300 + d * Math.sin(r), 175 - d * Math.cos(r)] as [number, number];
    });
    await drag(handle, [380, 175]);
    await until('the box turned to 90° by its handle', async () => Math.abs((await ofType('bbox'))[0].geometry.rotation - 90) < 1);
    const box = (await ofType('bbox'))[0].geometry;
    near([box.x, box.y, box.width, box.height], [250, 150, 100, 50], 'the box before rotation');

    // Polygon, then Shift+P on it draws a second part of the same object.
    await page.keyboard.press('p');
    for (const [x, y] of [[20, 220], [100, 220], [60, 280]]) await click(x, y);
    await page.keyboard.press('Enter');
    await until('the polygon saved', async () => (await ofType('polygon')).length === 1);
    await page.keyboard.press('v');
    await click(60, 240);
    await page.keyboard.press('Shift+P');
    for (const [x, y] of [[120, 220], [180, 220], [150, 280]]) await click(x, y);
    await page.keyboard.press('Enter');
    const polygon = await until('the second part', async () => {
      const p = (await ofType('polygon'))[0];
      return p.geometry.parts?.length === 2 && p;
    });
    assert.equal((await ofType('polygon')).length, 1, 'one object of two parts');
    near(polygon.geometry.parts[1].flat(), [120, 220, 180, 220, 150, 280], 'the second part');

    // The skeleton: select it, drag its left eye, X makes that point occluded.
    await page.keyboard.press('v');
    await click(50, 47);
    await drag([30, 40], [25, 35]);
    await until('the left eye moved', async () => Math.abs((await ofType('keypoints'))[0].geometry.points[1][0] - 25) <= 1.5);
    await page.keyboard.press('x');
    await until('the left eye occluded', async () => (await ofType('keypoints'))[0].geometry.points[1][2] === 1);

    // An attribute of the selected skeleton, in the objects list: saved with it, and undone with Ctrl+Z.
    await page.getByLabel('Attribute occluded').check();
    await until('the attribute saved', async () => (await ofType('keypoints'))[0].attributes.occluded === true);
    assert.deepEqual((await ofType('keypoints'))[0].attributes, { occluded: true, pose: 'standing' });
    await page.getByLabel('Attribute pose').selectOption('sitting');
    await until('the select saved', async () => (await ofType('keypoints'))[0].attributes.pose === 'sitting');
    await page.getByTestId('editor-canvas').focus();
    await page.keyboard.press('Control+z');
    await until('the select undone', async () => (await ofType('keypoints'))[0].attributes.pose === 'standing');
    await page.keyboard.press('Control+z');
    await until('the attribute undone', async () => Object.keys((await ofType('keypoints'))[0].attributes).length === 0);
    await page.keyboard.press('Control+z');
    await until('the visibility undone', async () => (await ofType('keypoints'))[0].geometry.points[1][2] === 2);
    assert.equal((await stored()).length, 6, 'skeleton, ellipse, polyline, points, box, polygon');
    await screenshot(page, 'shapes-editor');
    assert.deepEqual(live.errors, []);
  });
  it('places a whole skeleton from one dragged box, drags a point, toggles it; Backspace and Esc in every click tool; a hole and a part of a polygon; undoes', async () => {
    const page = live.page;
    await signedIn();
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Objects' })).id;
    // One class, with a skeleton: head, then two mirrored pairs.
    await call('post', `/api/projects/${projectId}/classes`, {
      name: 'person',
      skeleton: { points: ['head', 'left_shoulder', 'right_shoulder', 'left_hip', 'right_hip'], edges: [[0, 1], [0, 2], [1, 3], [2, 4]], flip_pairs: [[1, 2], [3, 4]] },
    });
    const { imageId, ofType } = await upload(projectId);
    await openEditor(projectId, imageId);

    // K, one drag: the template laid out in the box (a row per step from the head, pairs mirrored), every point visible.
    await page.keyboard.press('k');
    assert.match(await page.getByTestId('tool-hint').innerText(), /drag a box to place the whole skeleton/);
    await drag([100, 50], [200, 250]);
    const [placed] = await until('the skeleton placed', async () => (await ofType('keypoints'))[0] && (await ofType('keypoints')));
    const laid = [[150, 83.33], [175, 150], [125, 150], [175, 216.67], [125, 216.67]];
    assert.deepEqual(placed.geometry.points.map((p: number[]) => p[2]), [2, 2, 2, 2, 2]);
    placed.geometry.points.forEach((p: number[], i: number) => near(p.slice(0, 2), laid[i], `template point ${i}`));
    // It is left selected: its left hip drags at once, and X makes that point occluded.
    await drag([175, 216.67], [190, 240]);
    await until('the hip dragged', async () => Math.abs((await ofType('keypoints'))[0].geometry.points[3][0] - 190) <= 1.5);
    near((await ofType('keypoints'))[0].geometry.points[3], [190, 240, 2], 'the dragged hip');
    await page.keyboard.press('x');
    await until('the hip occluded', async () => (await ofType('keypoints'))[0].geometry.points[3][2] === 1);
    await page.keyboard.press('Control+z');
    await until('the visibility undone', async () => (await ofType('keypoints'))[0].geometry.points[3][2] === 2);
    await page.keyboard.press('Control+z');
    await until('the drag undone', async () => Math.abs((await ofType('keypoints'))[0].geometry.points[3][1] - 216.67) <= 1.5);

    // Point by point: Backspace takes the second point back; Enter saves, the points left not labelled.
    await page.keyboard.press('Escape');
    await click(300, 40);
    await click(320, 60);
    await page.keyboard.press('Backspace');
    await click(330, 70);
    await page.keyboard.press('Enter');
    const clicked = await until('the clicked skeleton', async () => (await ofType('keypoints'))[1]);
    near(clicked.geometry.points.flat(), [300, 40, 2, 330, 70, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0], 'the clicked skeleton');

    // Polyline: Backspace drops the last point; Esc drops a line in progress.
    await page.keyboard.press('l');
    for (const [x, y] of [[20, 280], [60, 270], [100, 285]]) await click(x, y);
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Enter');
    const [line] = await until('the polyline', async () => (await ofType('polyline'))[0] && (await ofType('polyline')));
    near(line.geometry.points.flat(), [20, 280, 60, 270], 'the polyline less its last point');
    await click(200, 280);
    await click(240, 280);
    await page.keyboard.press('Escape');
    await click(250, 290);
    await click(290, 290);
    await page.keyboard.press('Enter');
    const lines = await until('the second polyline', async () => (await ofType('polyline')).length === 2 && (await ofType('polyline')));
    near(lines[1].geometry.points.flat(), [250, 290, 290, 290], 'only the points after Esc');

    // Polygon: Backspace drops a point. Selected, Shift+H cuts a hole in it; a hole outside it is refused and said.
    await page.keyboard.press('p');
    for (const [x, y] of [[220, 20], [380, 20], [380, 140], [300, 200]]) await click(x, y);
    await page.keyboard.press('Backspace');
    await click(220, 140);
    await page.keyboard.press('Enter');
    const [polygon] = await until('the polygon', async () => (await ofType('polygon'))[0] && (await ofType('polygon')));
    near(polygon.geometry.points.flat(), [220, 20, 380, 20, 380, 140, 220, 140], 'the polygon');
    await page.keyboard.press('v');
    await click(230, 30);
    await page.keyboard.press('Shift+H');
    for (const [x, y] of [[280, 60], [320, 60], [300, 100]]) await click(x, y);
    await page.keyboard.press('Enter');
    const holed = await until('the hole', async () => (await ofType('polygon'))[0].geometry.holes?.length === 1 && (await ofType('polygon'))[0]);
    near(holed.geometry.holes[0].flat(), [280, 60, 320, 60, 300, 100], 'the hole');
    await page.keyboard.press('Shift+H');
    for (const [x, y] of [[20, 20], [60, 20], [40, 60]]) await click(x, y);
    await page.keyboard.press('Enter');
    await page.locator('.toast').filter({ hasText: 'Hole not saved: draw it inside the selected object' }).waitFor();
    // Shift+P: another part of the same object, its hole kept.
    await page.keyboard.press('Shift+P');
    for (const [x, y] of [[300, 220], [380, 220], [340, 280]]) await click(x, y);
    await page.keyboard.press('Enter');
    const two = await until('the second part', async () => (await ofType('polygon'))[0].geometry.parts?.length === 2 && (await ofType('polygon'))[0]);
    near(two.geometry.parts[1].flat(), [300, 220, 380, 220, 340, 280], 'the second part');
    assert.equal(two.geometry.holes.length, 1, 'the hole outside was not saved; the one inside is kept');
    assert.equal((await ofType('polygon')).length, 1, 'one object');
    await page.getByTestId('editor-canvas').focus();
    await page.keyboard.press('Control+z');
    await until('the part undone', async () => !(await ofType('polygon'))[0].geometry.parts);
    await page.keyboard.press('Control+z');
    await until('the hole undone', async () => !(await ofType('polygon'))[0].geometry.holes);
    await screenshot(page, 'shapes-editor-objects');
    assert.deepEqual(live.errors, []);
  });

  it('the review page draws every shape with the editor\'s own tracing: a rotated box, an ellipse, a skeleton with its edges, a polyline, points, a polygon of two parts with a hole', async () => {
    const page = live.page;
    await signedIn();
    const projectId = (await call<{ id: number }>('post', '/api/projects', { name: 'Review shapes' })).id;
    const person = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'person', skeleton: { points: ['nose', 'left_eye', 'right_eye'], edges: [[0, 1], [0, 2]] } })).id;
    const thing = (await call<{ id: number }>('post', `/api/projects/${projectId}/classes`, { name: 'thing' })).id;
    const { imageId } = await upload(projectId);
    const shapes: [number, string, object][] = [
      [thing, 'bbox', { x: 100, y: 50, width: 100, height: 40, rotation: 90 }],
      [thing, 'ellipse', { cx: 300, cy: 80, rx: 40, ry: 20, rotation: 0 }],
      [person, 'keypoints', { points: [[50, 150, 2], [30, 180, 1], [0, 0, 0]] }],
      [thing, 'polyline', { points: [[20, 250], [80, 260], [140, 250]] }],
      [thing, 'points', { points: [[200, 250], [220, 260]] }],
      [thing, 'polygon', { points: [[220, 150], [300, 150], [300, 230]], parts: [[[220, 150], [300, 150], [300, 230]], [[320, 150], [390, 150], [390, 230]]], holes: [[[270, 160], [290, 160], [290, 190]]] }],
    ];
    for (const [class_id, annotation_type, geometry] of shapes) await call('post', `/api/images/${imageId}/annotations`, { class_id, annotation_type, geometry });
    await call('post', `/api/projects/${projectId}/reviews`, { image_id: imageId });
    await page.goto(`${base()}/projects/${projectId}/review`);
    await page.locator('[data-shape="polygon"]').waitFor();
    // Per shape: its label and its paths (d, fill, fill rule); the outline is the one marked with the shape's type.
    const drawn = await page.getByTestId('review-annotations').evaluate((svg) =>
      [...svg.querySelectorAll(':scope > g')].map((g) => ({
        label: g.getAttribute('data-label'),
        type: g.querySelector('[data-shape]')?.getAttribute('data-shape'),
        paths: [...g.querySelectorAll('path')].map((p) => ({ d: p.getAttribute('d')!, fill: p.getAttribute('fill'), rule: p.getAttribute('fill-rule'), outline: p.hasAttribute('data-shape') })),
      })),
    );
    const of = (type: string) => drawn.find((s) => s.type === type)!;
    assert.deepEqual(drawn.map((s) => s.type).sort(), ['bbox', 'ellipse', 'keypoints', 'points', 'polygon', 'polyline']);
    const outline = (type: string) => of(type).paths.find((p) => p.outline)!.d;
    // The box turned 90° about its centre (150, 70).
    assert.equal(outline('bbox'), 'M170 20L170 120L130 120L130 20Z');
    assert.equal(outline('ellipse'), 'M340 80A40 20 0 1 1 260 80A40 20 0 1 1 340 80Z');
    // The skeleton: the edge between two labelled points (not the one to the unlabelled eye), the visible point
    // filled, the occluded one hollow.
    assert.equal(outline('keypoints'), 'M50 150L30 180');
    const skeleton = of('keypoints').paths.filter((p) => !p.outline);
    assert.equal(skeleton.length, 2);
    assert.equal(skeleton.find((p) => p.fill === 'none')!.d.split('M').length - 1, 1, 'one hollow square');
    assert.equal(skeleton.find((p) => p.fill !== 'none')!.d.split('M').length - 1, 1, 'one filled square');
    assert.equal(outline('polyline'), 'M20 250L80 260L140 250');
    assert.equal(of('points').paths.find((p) => !p.outline)!.d.split('M').length - 1, 2, 'two point squares');
    // Both parts and the hole, filled even-odd: the hole stays open.
    const rings = 'M220 150L300 150L300 230ZM320 150L390 150L390 230ZM270 160L290 160L290 190Z';
    assert.equal(outline('polygon'), rings);
    assert.deepEqual(of('polygon').paths.find((p) => !p.outline), { d: rings, fill: of('polygon').paths[0].fill, rule: 'evenodd', outline: false });
    assert.deepEqual(drawn.map((s) => s.label).sort(), ['person', 'thing', 'thing', 'thing', 'thing', 'thing']);
    await screenshot(page, 'shapes-review-overlay');
    assert.deepEqual(live.errors, []);
  });
});
