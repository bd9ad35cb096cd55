/**
 * A dataset that cannot be read or written as asked (bad layout, malformed file, unsafe archive). The HTTP layer maps
 * it to 422 with this message; `code` tells the kinds apart for callers that care (e.g. a zip bomb vs a bad label).
 */
export class FormatError extends Error {
  constructor(
    message: string,
    readonly code: 'invalid_dataset' | 'unsafe_archive' | 'archive_too_large' = 'invalid_dataset',
  ) {
    super(message);
    this.name = 'FormatError';
  }
}
