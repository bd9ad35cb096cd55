/**
 * True when `url` starts with one of the operator's allowed prefixes (compared as parsed, normalised URLs): the one
 * check of every URL the server is asked to reach on a user's behalf (webhooks, project storages' endpoints).
 */
export function urlAllowed(url: string, allowlist: readonly string[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.username || parsed.password) return false;
  return allowlist.some((prefix) => {
    const allowed = new URL(prefix);
    return parsed.origin === allowed.origin && parsed.pathname.startsWith(allowed.pathname);
  });
}
