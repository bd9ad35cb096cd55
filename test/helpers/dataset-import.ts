import { multipart } from './multipart.js';
import type { Client } from './test-app.js';

/** POST /api/projects/import: the zip in the part `file` (named `filename`, which names the project by default), plus form fields. */
export function importZip(client: Client, zip: Buffer, fields: Record<string, string> = {}, filename = 'dataset.zip') {
  const { payload, headers } = multipart([{ name: 'file', filename, data: zip, contentType: 'application/zip' }], fields);
  return client.request({ method: 'POST', url: '/api/projects/import', payload, headers });
}
