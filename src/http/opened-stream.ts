import type { Readable } from 'node:stream';
import { NotFoundError } from './errors.js';

/**
 * Waits until a stored object's stream has data (or has ended), so that an object missing from the store (removed from
 * a bucket by hand, a volume restored from an older backup) answers 404 before any header is sent, instead of a 500 or
 * a response cut off after its headers. A store reports a missing object with `code: 'ENOENT'` (see BlobStore).
 */
export function opened(stream: Readable): Promise<Readable> {
  return new Promise((resolve, reject) => {
    const done = (err?: NodeJS.ErrnoException) => {
      stream.off('readable', ready).off('error', done);
      if (!err) return resolve(stream);
      stream.destroy();
      reject(err.code === 'ENOENT' ? new NotFoundError('The stored file is missing from storage') : err);
    };
    const ready = () => done();
    stream.once('readable', ready).once('error', done);
  });
}
