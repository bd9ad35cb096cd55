/**
 * A one-line progress bar on stderr. On a terminal it redraws in place; elsewhere (CI logs, pipes) it prints a line
 * at most every 10% so logs stay short.
 */
export class ProgressBar {
  private lastPrinted = -1;
  private readonly tty: boolean;

  constructor(
    private readonly label: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.tty = Boolean(stream.isTTY);
  }

  update(done: number, total: number, suffix = ''): void {
    const fraction = total > 0 ? Math.min(1, done / total) : 0;
    const width = 28;
    const filled = Math.round(width * fraction);
    const text = `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${total > 0 ? `${done}/${total}` : done}${suffix ? ` ${suffix}` : ''}`;
    if (this.tty) {
      this.stream.write(`\r${text}\u001b[K`);
    } else {
      const step = Math.floor(fraction * 10);
      if (step === this.lastPrinted) return;
      this.lastPrinted = step;
      this.stream.write(`${text}\n`);
    }
  }

  done(message?: string): void {
    if (this.tty) this.stream.write('\n');
    if (message) this.stream.write(`${message}\n`);
  }
}

export function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
