import type { Writable } from 'node:stream';
import type { DatasetToWrite, WriteStats } from '../dataset.js';
import { FormatError } from '../format-error.js';
import { round2 } from '../geometry.js';
import { maskCrop, rowRuns, subsetOf } from './interop-shared.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { escapeXml } from './voc-writer.js';
import { writeZip } from './zip-output.js';

/**
 * CVAT for images 1.1 (what CVAT's "Import dataset" reads): `annotations.xml` with the labels in `<meta>` and one
 * `<image>` per image (`subset` = split, `default` for none), images under `images/<subset>/`. Boxes are `<box>`,
 * polygons `<polygon>`, masks `<mask>` (CVAT's row-major run lengths inside the mask's box), image-level labels `<tag>`.
 */
export async function writeCvat(dataset: DatasetToWrite, output: Writable): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const classes = new Set(dataset.classes);
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    const images: string[] = [];
    for await (const item of dataset.items) {
      const subset = subsetOf(item.split);
      const fileName = safeEntryName(item.fileName);
      const { width, height } = await sizeOf(item);
      const shapes: string[] = [];
      for (const a of item.annotations) {
        if (!classes.has(a.className)) throw new FormatError(`annotation class "${a.className}" is not in the class list`);
        const label = escapeXml(a.className);
        if (a.type === 'bbox') {
          const g = a.geometry;
          shapes.push(`    <box label="${label}" source="manual" occluded="0" xtl="${round2(g.x)}" ytl="${round2(g.y)}" xbr="${round2(g.x + g.width)}" ybr="${round2(g.y + g.height)}" z_order="0"/>`);
        } else if (a.type === 'polygon') {
          const points = a.geometry.points.map(([x, y]) => `${round2(x)},${round2(y)}`).join(';');
          shapes.push(`    <polygon label="${label}" source="manual" occluded="0" points="${points}" z_order="0"/>`);
        } else if (a.type === 'mask') {
          const crop = maskCrop(a.geometry.rle);
          if (!crop) continue;
          shapes.push(`    <mask label="${label}" source="manual" occluded="0" rle="${rowRuns(crop.data).join(', ')}" left="${crop.left}" top="${crop.top}" width="${crop.width}" height="${crop.height}" z_order="0"/>`);
        } else {
          shapes.push(`    <tag label="${label}" source="manual"/>`);
        }
      }
      images.push(`  <image id="${stats.imageCount}" name="${escapeXml(fileName)}" subset="${escapeXml(subset)}" width="${width}" height="${height}">\n${shapes.map((s) => `${s}\n`).join('')}  </image>\n`);
      await zip.addImage(`images/${safeEntryName(subset)}/${fileName}`, item.source);
      stats.imageCount++;
      stats.annotationCount += shapes.length;
    }
    const labels = dataset.classes.map((name) => `        <label>\n          <name>${escapeXml(name)}</name>\n          <attributes/>\n        </label>\n`).join('');
    const xml =
      `<?xml version="1.0" encoding="utf-8"?>\n<annotations>\n  <version>1.1</version>\n  <meta>\n    <task>\n      <name>versa export</name>\n` +
      `      <size>${stats.imageCount}</size>\n      <mode>annotation</mode>\n      <labels>\n${labels}      </labels>\n    </task>\n  </meta>\n${images.join('')}</annotations>\n`;
    await zip.addBuffer('annotations.xml', xml);
    return stats;
  });
}
