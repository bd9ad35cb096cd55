/** Runs `body` with Math.random answering `draws` in turn (round and round), then puts the real one back. */
export async function withDraws<T>(draws: number[], body: () => Promise<T>): Promise<T> {
  const real = Math.random;
  let i = 0;
  Math.random = () => draws[i++ % draws.length];
  try {
    return await body();
  } finally {
    Math.random = real;
  }
}
