/** A progress bar on stderr, only when stderr is a terminal (never in pipes, logs or tests). */
export interface Progress {
  update(events: number): void;
  done(): void;
}

const WIDTH = 30;

export function createProgress(stream: NodeJS.WriteStream, total: number): Progress {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  const started = Date.now();
  let last = 0;
  let drawn = false;
  return {
    update(events) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      drawn = true;
      const rate = Math.round(events / Math.max((now - started) / 1000, 0.001));
      const fraction = total > 0 ? Math.min(events / total, 1) : 0;
      const filled = Math.round(fraction * WIDTH);
      const bar = total > 0 ? `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${Math.floor(fraction * 100)}% ` : '';
      const count = total > 0 ? `${events.toLocaleString('en-US')}/${total.toLocaleString('en-US')}` : events.toLocaleString('en-US');
      stream.write(`\r\x1b[2Kverifying ${bar}${count} events, ${rate.toLocaleString('en-US')}/s`);
    },
    done() {
      if (drawn) stream.write('\r\x1b[2K');
    },
  };
}
