import { HttpError, ServiceUnavailableError } from '../http/errors.js';

/** The inference queue is full: the HTTP layer answers 503 with Retry-After so clients back off and retry. */
export class InferenceOverloadedError extends ServiceUnavailableError {
  constructor(retryAfterSeconds: number) {
    super('Inference is busy; retry shortly', retryAfterSeconds);
  }
}

/** The model file cannot be used for what was asked (not ONNX, wrong inputs, unknown output layout): a 422. */
export class UnsupportedModelError extends HttpError {
  constructor(message: string) {
    super(422, 'unsupported_model', message);
  }
}

/** The image given to a model could not be decoded: a 422. */
export class UnreadableImageError extends HttpError {
  constructor(message: string) {
    super(422, 'unreadable_image', message);
  }
}
