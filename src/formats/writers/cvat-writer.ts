import type { Writable } from 'node:stream';
import type { AttributeSpec, AttributeValue, Skeleton } from '../../imaging/class-specs.js';
import { encodeRle } from '../../imaging/rle.js';
import type { Annotation, DatasetToWrite, Point, WriteStats } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { fillPolygon, round2 } from '../geometry.js';
import { maskCrop, rowRuns, subsetOf } from './interop-shared.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { escapeXml } from './voc-writer.js';
import { writeZip } from './zip-output.js';
import { ExportTally, WITH_ATTRIBUTES, type Wrote } from './export-tally.js';

export const f2 = (v: number) => round2(v).toFixed(2);
export const pointsText = (points: readonly (readonly number[])[]) => points.map(([x, y]) => `${f2(x)},${f2(y)}`).join(';');

/**
 * CVAT for images 1.1 as CVAT's own project export writes it, so that CVAT's "Import dataset" into a project reads
 * it: `annotations.xml` whose `<meta><project>` declares the labels (attributes, skeletons with their `<svg>` and
 * sublabels), one `<task>` per subset and `<subsets>`; one `<image>` per image with its `subset` and `task_id` (ids
 * counted per subset, as CVAT numbers frames per task), the image under `images/<subset>/` (`default` for none).
 * Shapes: `<box>` (with `rotation`), `<polygon>` (a polygon in parts: one per part, sharing a `group_id`; a polygon
 * with holes, which CVAT cannot draw, as a `<mask>`), `<polyline>`, `<points>`, `<ellipse>`, `<mask>`, `<skeleton>`
 * (keypoints; a point not labelled is `outside="1"`, one not visible `occluded="1"`), `<tag>`. Attribute values are
 * `<attribute>` children; the checkbox attribute `occluded` is CVAT's own `occluded` flag.
 */
export async function writeCvat(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const classes = new Set(dataset.classes);
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    const images: string[] = [];
    const subsets = new Map<string, { id: number; size: number }>();
    const undeclared = new Map<string, Map<string, AttributeSpec>>();
    for await (const item of dataset.items) {
      const subset = subsetOf(item.split);
      const fileName = safeEntryName(item.fileName);
      const { width, height } = await sizeOf(item);
      let task = subsets.get(subset);
      if (!task) subsets.set(subset, (task = { id: subsets.size + 1, size: 0 }));
      const shapes: string[] = [];
      let nextGroup = Math.max(0, ...item.annotations.map((a) => a.groupId ?? 0)) + 1;
      for (const a of item.annotations) {
        if (!classes.has(a.className)) throw new FormatError(`annotation class "${a.className}" is not in the class list`);
        noteUndeclared(a, dataset.classSpecs?.get(a.className)?.attributes ?? [], undeclared);
        const written = shapeXml(a, width, height, dataset.classSpecs?.get(a.className)?.skeleton, () => nextGroup++);
        shapes.push(...written);
        stats.annotationCount += written.length > 0 ? 1 : 0;
        tallyShape(a, written.length > 0, tally);
      }
      images.push(
        `  <image id="${task.size}" name="${escapeXml(fileName)}" subset="${escapeXml(subset)}" task_id="${task.id}" width="${width}" height="${height}">\n` +
          shapes.join('') +
          '  </image>\n',
      );
      task.size++;
      await zip.addImage(`images/${safeEntryName(subset)}/${fileName}`, item.source);
      stats.imageCount++;
    }
    const now = new Date().toISOString().replace('T', ' ').replace('Z', '+00:00');
    const tasks = [...subsets]
      .map(([subset, task]) =>
        `        <task>\n          <id>${task.id}</id>\n          <name>${escapeXml(subset)}</name>\n          <size>${task.size}</size>\n` +
        `          <mode>annotation</mode>\n          <overlap>0</overlap>\n          <bugtracker></bugtracker>\n          <created>${now}</created>\n` +
        `          <updated>${now}</updated>\n          <subset>${escapeXml(subset)}</subset>\n          <start_frame>0</start_frame>\n` +
        `          <stop_frame>${Math.max(0, task.size - 1)}</stop_frame>\n          <frame_filter></frame_filter>\n        </task>\n`)
      .join('');
    const labels = dataset.classes
      .map((name) => labelXml(name, [...(dataset.classSpecs?.get(name)?.attributes ?? []), ...(undeclared.get(name)?.values() ?? [])], dataset.classSpecs?.get(name)?.skeleton))
      .join('');
    // CVAT's importer splits <subsets> on newlines: no indentation inside it.
    const xml =
      `<?xml version="1.0" encoding="utf-8"?>\n<annotations>\n  <version>1.1</version>\n  <meta>\n    <project>\n      <id>1</id>\n` +
      `      <name>versa export</name>\n      <bugtracker></bugtracker>\n      <created>${now}</created>\n      <updated>${now}</updated>\n` +
      `      <tasks>\n${tasks}      </tasks>\n      <subsets>${[...subsets.keys()].map(escapeXml).join('\n')}</subsets>\n` +
      `      <labels>\n${labels}      </labels>\n    </project>\n    <dumped>${now}</dumped>\n  </meta>\n${images.join('')}</annotations>\n`;
    await zip.addBuffer('annotations.xml', xml);
    return stats;
  });
}

/**
 * Attribute values the class does not declare (a frame's track shapes carry `track_id` and `keyframe`), noted so that
 * `<meta>` declares them too: CVAT, and Versa's reader, drop values whose attribute is not declared. The type follows
 * the value (true/false a checkbox, a number a number, else text).
 */
function noteUndeclared(a: Annotation, specs: readonly AttributeSpec[], undeclared: Map<string, Map<string, AttributeSpec>>): void {
  for (const [name, value] of Object.entries(a.attributes ?? {})) {
    if (specs.some((s) => s.name === name) || undeclared.get(a.className)?.has(name)) continue;
    const type = typeof value === 'boolean' ? 'checkbox' : typeof value === 'number' ? 'number' : 'text';
    const spec: AttributeSpec = type === 'number' ? { name, type, values: [-1e9, 1e9, 1] } : { name, type };
    if (!undeclared.has(a.className)) undeclared.set(a.className, new Map());
    undeclared.get(a.className)!.set(name, spec);
  }
}

/** What a CVAT shape holds besides its geometry: every attribute value (declared in <meta>), its group id. */
const WROTE: Wrote = { ...WITH_ATTRIBUTES, track: "track_id attribute on each frame's shape, declared in <meta>" };

/** What CVAT made of a shape: a polygon with holes is a mask, one in parts polygons in a group; a mask with no pixels is left out. */
function tallyShape(a: Annotation, written: boolean, tally: ExportTally): void {
  if (!written) tally.shape(a, 'skipped', `${a.type} (no pixels)`, WROTE);
  else if (a.type === 'polygon' && a.geometry.holes?.length) tally.shape(a, 'converted', 'polygon with holes→mask', WROTE);
  else if (a.type === 'polygon' && (a.geometry.parts?.length ?? 1) > 1) tally.shape(a, 'converted', 'polygon parts→polygons in one group', WROTE);
  else tally.shape(a, 'kept', a.type, WROTE);
}

export function valueText(value: AttributeValue): string {
  return typeof value === 'boolean' ? (value ? 'true' : 'false') : String(value);
}

/** `occluded="…"` and the `<attribute>` children of a shape (the checkbox `occluded` is CVAT's flag, not an attribute). */
function attributeParts(a: Annotation): { occluded: string; children: string } {
  const entries = Object.entries(a.attributes ?? {});
  const occluded = a.attributes?.occluded === true ? '1' : '0';
  const children = entries
    .filter(([name, value]) => !(name === 'occluded' && typeof value === 'boolean'))
    .map(([name, value]) => `      <attribute name="${escapeXml(name)}">${escapeXml(valueText(value))}</attribute>\n`)
    .join('');
  return { occluded, children };
}

function element(tag: string, attrs: string, children: string): string {
  return children ? `    <${tag} ${attrs}>\n${children}    </${tag}>\n` : `    <${tag} ${attrs}>\n    </${tag}>\n`;
}

/** The XML of one annotation (several elements for a polygon in parts); none for a mask with no pixels. */
function shapeXml(a: Annotation, width: number, height: number, skeleton: Skeleton | undefined, newGroup: () => number): string[] {
  const label = escapeXml(a.className);
  const { occluded, children } = attributeParts(a);
  const group = a.groupId ? ` group_id="${a.groupId}"` : '';
  const common = `label="${label}" source="manual" occluded="${occluded}"`;
  switch (a.type) {
    case 'bbox': {
      const g = a.geometry;
      const rotation = g.rotation ? ` rotation="${f2(g.rotation)}"` : '';
      return [element('box', `${common} xtl="${f2(g.x)}" ytl="${f2(g.y)}" xbr="${f2(g.x + g.width)}" ybr="${f2(g.y + g.height)}"${rotation} z_order="0"${group}`, children)];
    }
    case 'polygon': {
      const parts = a.geometry.parts ?? [a.geometry.points];
      if (a.geometry.holes?.length) {
        const data = new Uint8Array(width * height);
        for (const part of parts) fillPolygon(data, width, height, part as Point[], 1);
        for (const hole of a.geometry.holes) fillPolygon(data, width, height, hole as Point[], 0);
        return maskXml(encodeRle({ width, height, data }), common, group, children);
      }
      const partGroup = parts.length > 1 && !a.groupId ? ` group_id="${newGroup()}"` : group;
      return parts.map((part) => element('polygon', `${common} points="${pointsText(part)}" z_order="0"${partGroup}`, children));
    }
    case 'polyline':
      return [element('polyline', `${common} points="${pointsText(a.geometry.points)}" z_order="0"${group}`, children)];
    case 'points':
      return [element('points', `${common} points="${pointsText(a.geometry.points)}" z_order="0"${group}`, children)];
    case 'ellipse': {
      const g = a.geometry;
      const rotation = g.rotation ? ` rotation="${f2(g.rotation)}"` : '';
      return [element('ellipse', `${common} cx="${f2(g.cx)}" cy="${f2(g.cy)}" rx="${f2(g.rx)}" ry="${f2(g.ry)}"${rotation} z_order="0"${group}`, children)];
    }
    case 'mask':
      return maskXml(a.geometry.rle, common, group, children);
    case 'keypoints': {
      const names = skeletonNames(skeleton, a.geometry.points.length);
      const points = a.geometry.points
        .map(([x, y, v], i) => `      <points label="${escapeXml(names[i])}" source="manual" outside="${v === 0 ? 1 : 0}" occluded="${v === 1 ? 1 : 0}" points="${f2(x)},${f2(y)}">\n      </points>\n`)
        .join('');
      return [`    <skeleton label="${label}" source="manual" z_order="0"${group}>\n${points}${children}    </skeleton>\n`];
    }
    case 'classification':
      return [children ? `    <tag label="${label}" source="manual"${group}>\n${children}    </tag>\n` : `    <tag label="${label}" source="manual"${group}>\n    </tag>\n`];
  }
}

function maskXml(rle: Parameters<typeof maskCrop>[0], common: string, group: string, children: string): string[] {
  const crop = maskCrop(rle);
  if (!crop) return [];
  return [element('mask', `${common} rle="${rowRuns(crop.data).join(', ')}" left="${crop.left}" top="${crop.top}" width="${crop.width}" height="${crop.height}" z_order="0"${group}`, children)];
}

/** The point names of a keypoint class: its skeleton's, or 1…n when it declares none (CVAT names sublabels freely). */
function skeletonNames(skeleton: Skeleton | undefined, n: number): string[] {
  const names = skeleton?.points.slice(0, n) ?? [];
  for (let i = names.length; i < n; i++) names.push(String(i + 1));
  return names;
}

/** CVAT's `<attribute>` declaration of a spec (`values` one a line; a number's are min, max, step). */
function attributeXml(spec: AttributeSpec): string {
  let inputType: string = spec.type;
  let values: string[] = [];
  let fallback = spec.default === undefined ? '' : valueText(spec.default);
  if (spec.type === 'checkbox') {
    values = ['false', 'true'];
    fallback ||= 'false';
  } else if (spec.type === 'select') {
    values = (spec.values ?? []).map(String);
    fallback ||= values[0] ?? '';
  } else if (spec.type === 'number') {
    const [min = -1e6, max = 1e6, step = 1] = (spec.values ?? []) as number[];
    values = [min, max, step].map(String);
    fallback ||= String(min);
  } else {
    inputType = 'text';
  }
  return (
    `            <attribute>\n              <name>${escapeXml(spec.name)}</name>\n              <mutable>False</mutable>\n` +
    `              <input_type>${inputType}</input_type>\n              <default_value>${escapeXml(fallback)}</default_value>\n` +
    `              <values>${values.map(escapeXml).join('\n')}</values>\n            </attribute>\n`
  );
}

/** A class's `<label>`, and for a skeleton its `<svg>` (a circle per point, a line per edge) and one sublabel per point. */
export function labelXml(name: string, specs: AttributeSpec[], skeleton: Skeleton | undefined): string {
  const attributes = specs.filter((s) => !(s.name === 'occluded' && s.type === 'checkbox'));
  const attributesXml = attributes.length ? `          <attributes>\n${attributes.map(attributeXml).join('')}          </attributes>\n` : '          <attributes>\n          </attributes>\n';
  if (!skeleton) return `        <label>\n          <name>${escapeXml(name)}</name>\n          <type>any</type>\n${attributesXml}        </label>\n`;
  const n = skeleton.points.length;
  const at = (i: number) => [50 + 40 * Math.cos((2 * Math.PI * i) / n), 50 + 40 * Math.sin((2 * Math.PI * i) / n)].map((v) => v.toFixed(2));
  const lines = skeleton.edges.map(([a, b]) => {
    const [x1, y1] = at(a);
    const [x2, y2] = at(b);
    return `<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="black" data-type="edge" data-node-from="${a + 1}" stroke-width="0.5" data-node-to="${b + 1}"></line>`;
  });
  const circles = skeleton.points.map((point, i) => {
    const [cx, cy] = at(i);
    return `<circle r="1.5" stroke="black" fill="#b3b3b3" cx="${cx}" cy="${cy}" stroke-width="0.1" data-type="element node" data-element-id="${i + 1}" data-node-id="${i + 1}" data-label-name="${escapeXml(point)}"></circle>`;
  });
  const sublabels = skeleton.points
    .map((point) => `        <label>\n          <name>${escapeXml(point)}</name>\n          <type>points</type>\n          <attributes>\n          </attributes>\n          <parent>${escapeXml(name)}</parent>\n        </label>\n`)
    .join('');
  return (
    `        <label>\n          <name>${escapeXml(name)}</name>\n          <type>skeleton</type>\n${attributesXml}` +
    `          <svg>${escapeXml([...lines, ...circles].join(''))}</svg>\n        </label>\n${sublabels}`
  );
}
