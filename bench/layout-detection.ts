/**
 * Layout detection cost (src/formats/readers/layout.ts) on generated folders of 10,000 images with one annotation
 * file each (Pascal VOC XML, YOLO labels + data.yaml, LabelMe JSON), against a bare baseline in the same run: a
 * recursive readdir of the same folder. Detection looks at file names and the first bytes of annotation files only,
 * so images are 1-byte placeholders. Median of `rounds` runs.
 *
 *   npx tsx bench/layout-detection.ts [images=10000] [rounds=5]
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectFormat } from '../src/formats/readers/index.js';

const images = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 5);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const layouts: Record<string, (root: string, i: number) => Promise<void>> = {
  voc: async (root, i) => {
    await writeFile(join(root, `img${i}.jpg`), 'x');
    await writeFile(join(root, `img${i}.xml`), `<annotation><filename>img${i}.jpg</filename><object><name>car</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax><ymax>5</ymax></bndbox></object></annotation>`);
  },
  yolo: async (root, i) => {
    await writeFile(join(root, 'train/images', `img${i}.jpg`), 'x');
    await writeFile(join(root, 'train/labels', `img${i}.txt`), '0 0.5 0.5 0.1 0.1\n');
  },
  labelme: async (root, i) => {
    await writeFile(join(root, `img${i}.jpg`), 'x');
    await writeFile(join(root, `img${i}.json`), JSON.stringify({ version: '5.5.0', shapes: [{ label: 'car', points: [[1, 1], [5, 5]], shape_type: 'rectangle' }], imagePath: `img${i}.jpg` }));
  },
};

const work = await mkdtemp(join(tmpdir(), 'versa-bench-layout-'));
try {
  console.log(`layout detection on ${images} images, median of ${rounds} (ms)`);
  console.log('layout   | detectFormat | bare readdir | ratio');
  for (const [name, make] of Object.entries(layouts)) {
    const root = join(work, name);
    await mkdir(join(root, 'train/images'), { recursive: true });
    await mkdir(join(root, 'train/labels'), { recursive: true });
    if (name === 'yolo') await writeFile(join(root, 'data.yaml'), 'train: train/images\nnames: [car]\n');
    for (let i = 0; i < images; i++) await make(root, i);
    const detect: number[] = [];
    const bare: number[] = [];
    for (let r = 0; r < rounds; r++) {
      bare.push(await time(() => readdir(root, { recursive: true, withFileTypes: true })));
      detect.push(await time(async () => {
        const format = await detectFormat(root);
        if (format !== name) throw new Error(`detected ${format} for ${name}`);
      }));
    }
    const [d, b] = [median(detect), median(bare)];
    console.log(`${name.padEnd(8)} | ${d.toFixed(0).padStart(12)} | ${b.toFixed(0).padStart(12)} | ${(d / b).toFixed(1)}×`);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
