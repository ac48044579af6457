/** One line of a progress bar: `[#######-------------]  35%  3,500/10,000 records`. */
export function progressLine(done: number, total: number, unit: string, width = 30): string {
  const fraction = total <= 0 ? 0 : Math.min(1, done / total);
  const filled = Math.round(fraction * width);
  const pct = `${Math.floor(fraction * 100)}%`.padStart(4);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${pct}  ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${unit}`;
}

/**
 * A progress bar on a terminal (redrawn in place), silent elsewhere so scripts and
 * logs get only the result.
 */
export class ProgressBar {
  private last = '';

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly unit: string,
  ) {}

  update(done: number, total: number): void {
    if (!this.stream.isTTY) return;
    const line = progressLine(done, total, this.unit);
    if (line === this.last) return;
    this.last = line;
    this.stream.write(`\r\x1b[2K${line}`);
  }

  done(): void {
    if (this.stream.isTTY && this.last !== '') this.stream.write('\n');
  }
}
