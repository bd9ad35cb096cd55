/** Driver error codes of both dialects, so that nothing outside db/ needs to know which one it runs on. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503';
}

/** PostgreSQL's deadlock and serialization failures: the transaction was rolled back and may simply run again. */
export function isRetryableConflict(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === '40P01' || code === '40001' || code === 'SQLITE_BUSY';
}

/**
 * Runs a transaction body again (up to `attempts` times, with a short random pause) when the database rolled it back
 * for a deadlock or a serialization failure; other errors pass through at once.
 */
export async function retryOnConflict<T>(body: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await body();
    } catch (err) {
      if (!isRetryableConflict(err) || attempt >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
    }
  }
}
