import { Random } from '../lib/random.js';
import { generateShapesImage, type ShapesImage, type ShapesImageOptions } from './shapes.js';
import { forEachConcurrently } from '../lib/batches.js';

export interface DatasetOptions extends Omit<ShapesImageOptions, 'seed' | 'count'> {
  /** Shapes per image: a fixed number, or an inclusive range drawn per image (default 2 to 6). */
  count?: number | [min: number, max: number];
}

export interface DatasetImage extends ShapesImage {
  index: number;
  /** `shapes-0007.jpg`: unique within a dataset, stable for a seed. */
  filename: string;
}

/** Image `index` of the dataset made from `seed`: each image has its own seed, so any one can be made alone. */
export async function datasetImage(seed: number | string, index: number, options: DatasetOptions = {}): Promise<DatasetImage> {
  const { count = [2, 6], ...rest } = options;
  const imageSeed = `${seed}/${index}`;
  const shapes = typeof count === 'number' ? count : Random.from('synthetic-count', imageSeed).int(count[0], count[1]);
  const image = await generateShapesImage({ ...rest, seed: imageSeed, count: shapes });
  return { ...image, index, filename: `shapes-${String(index).padStart(4, '0')}.${image.extension}` };
}

/** The first `size` images of the dataset, made `concurrency` at a time (encoding runs on libuv's thread pool). */
export async function generateDataset(
  seed: number | string,
  size: number,
  options: DatasetOptions = {},
  concurrency = 2,
): Promise<DatasetImage[]> {
  const images: DatasetImage[] = new Array(size);
  await forEachConcurrently(images, concurrency, async (_, index) => {
    images[index] = await datasetImage(seed, index, options);
  });
  return images;
}
