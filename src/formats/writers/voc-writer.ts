import type { Writable } from 'node:stream';
import type { DatasetToWrite, WriteStats } from '../dataset.js';
import { stemOf } from '../dataset.js';
import { round2 } from '../geometry.js';
import { safeEntryName, sizeOf } from './item-size.js';
import { boxOrTally } from './interop-shared.js';
import { ExportTally } from './export-tally.js';
import { writeZip } from './zip-output.js';

const VOC_FLAGS = ['difficult', 'truncated', 'occluded'];

/**
 * Pascal VOC zip: `{split}/<image>` with `{split}/<stem>.xml` beside it (Roboflow's layout) and `labels.txt` with
 * the classes in order. An object's `difficult`, `truncated` and `occluded` checkbox attributes are its VOC flags
 * (other attributes have no place: counted as skipped). Every geometry is written as its box,
 * clipped to the image (tallied as converted unless it is an upright box); classifications and shapes with no area in the image are left out and tallied. Items without a
 * split go to `train`.
 */
export async function writeVoc(dataset: DatasetToWrite, output: Writable, tally = new ExportTally()): Promise<WriteStats> {
  return writeZip(output, async (zip) => {
    const stats: WriteStats = { imageCount: 0, annotationCount: 0 };
    for await (const item of dataset.items) {
      const split = item.split ?? 'train';
      const { width, height } = await sizeOf(item);
      const fileName = safeEntryName(item.fileName);
      const objects: string[] = [];
      for (const annotation of item.annotations) {
        const flags = VOC_FLAGS.filter((name) => typeof annotation.attributes?.[name] === 'boolean');
        const box = boxOrTally(annotation, tally, { width, height }, { attributes: flags });
        if (!box) continue;
        const xmin = round2(box.x);
        const ymin = round2(box.y);
        const xmax = round2(box.x + box.width);
        const ymax = round2(box.y + box.height);
        const flag = (name: string) => (annotation.attributes?.[name] === true ? 1 : 0);
        objects.push(
          `  <object>\n    <name>${escapeXml(annotation.className)}</name>\n    <pose>Unspecified</pose>\n    <truncated>${flag('truncated')}</truncated>\n` +
            `    <occluded>${flag('occluded')}</occluded>\n    <difficult>${flag('difficult')}</difficult>\n    <bndbox>\n      <xmin>${xmin}</xmin>\n      <ymin>${ymin}</ymin>\n` +
            `      <xmax>${xmax}</xmax>\n      <ymax>${ymax}</ymax>\n    </bndbox>\n  </object>\n`,
        );
      }
      const xml =
        `<annotation>\n  <folder>${split}</folder>\n  <filename>${escapeXml(fileName)}</filename>\n` +
        `  <size>\n    <width>${width}</width>\n    <height>${height}</height>\n    <depth>3</depth>\n  </size>\n` +
        `  <segmented>0</segmented>\n${objects.join('')}</annotation>\n`;
      await zip.addImage(`${split}/${fileName}`, item.source);
      await zip.addBuffer(`${split}/${stemOf(fileName)}.xml`, xml);
      stats.imageCount++;
      stats.annotationCount += objects.length;
    }
    await zip.addBuffer('labels.txt', dataset.classes.map((name) => `${name}\n`).join(''));
    return stats;
  });
}

/**
 * Text as XML 1.0 character data. Control characters other than tab and line breaks cannot appear in XML 1.0 at all,
 * not even as references: they are dropped (names stored before they were refused may carry them).
 */
export function escapeXml(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);
}
