import type { Caller } from '../../access/caller.js';
import type { SampleFramesOut, TimeSegment } from './samples.schemas.js';

/** A video sample's stored file and time segments, as the frames port reads them. */
export interface SampleVideoSource {
  readonly sampleId: number;
  /** The file name it was imported with. */
  readonly name: string;
  readonly blobKey: string;
  readonly segments: readonly TimeSegment[];
}

export interface FramesRequest {
  readonly step: number;
  /** Seconds from the video's start; end excluded. Undefined members: the video's start or end. */
  readonly startS?: number;
  readonly endS?: number;
}

/**
 * What the samples module calls in the videos module to send a video sample to an image project as frames: app.ts
 * wires it to the videos service, so the sample goes through the one decode and ingest path of uploaded videos.
 */
export interface VideoFramesPort {
  fromSample(caller: Caller, projectId: number, source: SampleVideoSource, request: FramesRequest): Promise<SampleFramesOut>;
}
