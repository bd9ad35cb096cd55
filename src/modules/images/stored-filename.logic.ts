const MAX_STEM = 100;

/** The client's name reduced to a safe stem: base name, no extension, only [A-Za-z0-9._-], never empty. */
export function filenameStem(originalName: string): string {
  const base = originalName.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  const withoutExtension = dot > 0 ? base.slice(0, dot) : base;
  const stem = withoutExtension
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._-]+/, '')
    .replace(/[._]+$/, '')
    .slice(0, MAX_STEM);
  return stem || 'image';
}

/**
 * Stored names to try, in order, for an upload: the sanitised original name with the extension of the detected
 * type, then the same with the start of the content hash, then with the whole hash (unique unless someone uploads
 * a different file literally named so).
 */
export function storedFilenameCandidates(originalName: string, ext: string, sha256: string): string[] {
  const stem = filenameStem(originalName);
  return [`${stem}.${ext}`, `${stem}-${sha256.slice(0, 8)}.${ext}`, `${stem}-${sha256}.${ext}`];
}
