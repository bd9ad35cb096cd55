import type { FastifyInstance } from 'fastify';
import type { ModuleDeps } from '../module-deps.js';
import { TracksRepository } from './tracks.repository.js';
import { tracksRoutes } from './tracks.routes.js';
import { TracksService, type TrackShape } from './tracks.service.js';

export interface TracksModule {
  /** The tracks' shapes on the frame an image is (a frame's annotation list shows them). */
  readonly frameShapes: (imageId: number) => Promise<TrackShape[]>;
}

/** Object tracks over a video's frames, with keyframes and interpolation. */
export function registerTracksModule(app: FastifyInstance, deps: ModuleDeps): TracksModule {
  const service = new TracksService(new TracksRepository(deps.db), deps.access);
  tracksRoutes(app, service);
  return { frameShapes: (imageId) => service.frameShapes(imageId) };
}
