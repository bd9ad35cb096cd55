import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateDataset, SHAPE_CLASSES } from '../../src/synthetic/index.js';

/**
 * Writes a detection folder in the layout Versa materialises for the trainer (dataset.json + images/<split>/), made
 * from the synthetic shapes generator: for trainer tests and the direct-run baseline of the benchmark.
 */
export async function writeShapesFolder(dir: string, seed: string, counts: { train: number; valid: number; test: number }, size = { width: 192, height: 160 }): Promise<void> {
  const splits: Record<string, unknown[]> = {};
  let offset = 0;
  for (const split of ['train', 'valid', 'test'] as const) {
    const images = await generateDataset(`${seed}-${split}`, counts[split], { ...size, count: [1, 3], background: 'noise', masks: false, format: 'jpeg' });
    await mkdir(join(dir, 'images', split), { recursive: true });
    splits[split] = [];
    for (const image of images) {
      const file = `images/${split}/${image.filename}`;
      await writeFile(join(dir, file), image.data);
      (splits[split] as unknown[]).push({
        file,
        width: image.width,
        height: image.height,
        boxes: image.shapes.map((s) => [s.classIndex, s.bbox.x, s.bbox.y, s.bbox.width, s.bbox.height]),
      });
    }
    offset += images.length;
  }
  await writeFile(join(dir, 'dataset.json'), JSON.stringify({ task: 'detect', names: SHAPE_CLASSES.map((c) => c.name), splits }));
}
