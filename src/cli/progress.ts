/**
 * A one-line progress bar on stderr. On a terminal it redraws in place; elsewhere (CI logs, pipes) it prints a line
 * at most every 10% so logs stay short. Quiet (`--quiet`, or `--json` when stderr is no terminal) draws nothing.
 */
export class ProgressBar {
  private lastPrinted = -1;
  private drawn = false;
  private readonly tty: boolean;

  constructor(
    private readonly label: string,
    private readonly quiet = false,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.tty = Boolean(stream.isTTY);
  }

  /** `done` of `total` units; `unit: 'bytes'` shows them as KiB/MiB. */
  update(done: number, total: number, suffix = '', unit: 'count' | 'bytes' = 'count'): void {
    if (this.quiet) return;
    const fraction = total > 0 ? Math.min(1, done / total) : 0;
    const width = 28;
    const filled = Math.round(width * fraction);
    const show = unit === 'bytes' ? humanBytes : String;
    const text = `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${total > 0 ? `${show(done)}/${show(total)}` : show(done)}${suffix ? ` ${suffix}` : ''}`;
    if (this.tty) {
      this.stream.write(`\r${text}\u001b[K`);
      this.drawn = true;
    } else {
      const step = Math.floor(fraction * 10);
      if (step === this.lastPrinted) return;
      this.lastPrinted = step;
      this.stream.write(`${text}\n`);
    }
  }

  done(message?: string): void {
    if (this.quiet) return;
    if (this.tty && this.drawn) this.stream.write('\n');
    if (message) this.stream.write(`${message}\n`);
  }
}

export function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}
