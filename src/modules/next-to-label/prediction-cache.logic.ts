import type { ImagePrediction } from './uncertainty.logic.js';

/**
 * What a model said about an image, kept in memory by the hashes of the weights and of the image bytes, least
 * recently used dropped first: paging through a ranking or an editor following it does not run the model again,
 * and a changed file (other weights, other bytes) is simply another key. Not a table: it is derived, cheap to
 * recompute and needs no invalidation, and one entry is a few hundred bytes.
 */
export class PredictionCache {
  private readonly entries = new Map<string, ImagePrediction>();

  constructor(private readonly maxEntries: number) {}

  get(modelSha: string, imageSha: string): ImagePrediction | undefined {
    const key = `${modelSha}:${imageSha}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(modelSha: string, imageSha: string, prediction: ImagePrediction): void {
    const key = `${modelSha}:${imageSha}`;
    this.entries.delete(key);
    this.entries.set(key, prediction);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
