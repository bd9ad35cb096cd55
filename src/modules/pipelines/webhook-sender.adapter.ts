import { urlAllowed } from '../../lib/url-allowlist.js';
import type { WebhookPort } from './pipelines.ports.js';

const TIMEOUT_MS = 10_000;

/** True when `url` starts with one of the operator's allowed prefixes (the one URL check, src/lib/url-allowlist.ts). */
export const webhookAllowed = urlAllowed;

/**
 * A webhook step's POST of the run summary, to an allowlisted URL (checked
 * again here), without following redirects (a redirect could lead off the allowlist), with a timeout.
 */
export class WebhookSender implements WebhookPort {
  constructor(private readonly allowlist: readonly string[]) {}

  async post(url: string, body: unknown, signal: AbortSignal): Promise<{ status: number }> {
    if (!webhookAllowed(url, this.allowlist)) throw new Error(`Webhook URL ${url} is not on WEBHOOK_ALLOWLIST`);
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'versa-pipelines' },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]),
    });
    await response.body?.cancel();
    if (response.status >= 300) throw new Error(`Webhook answered ${response.status}`);
    return { status: response.status };
  }
}
