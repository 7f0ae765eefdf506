import fs from 'node:fs';

/**
 * fdatasync of the WAL file on libuv's thread pool, coalesced: at most one sync runs and at most
 * one waits behind it, which covers every commit made before it started. On Linux fsync flushes the
 * file (the inode), whichever descriptor wrote to it, so a descriptor of our own serves.
 */
export class WalSync {
  private fd: number | null = null;
  private running: Promise<void> | null = null;
  private waiting: Promise<void> | null = null;

  constructor(private readonly walFile: string) {}

  /** Resolves once everything committed before the call is on disk. */
  request(): Promise<void> {
    if (this.waiting) return this.waiting;
    if (!this.running) {
      this.running = this.sync().finally(() => (this.running = null));
      return this.running;
    }
    // The sync in flight may have started before this commit: one more after it covers it.
    this.waiting = this.running.catch(() => undefined).then(() => {
      this.waiting = null;
      return this.request();
    });
    return this.waiting;
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  private async sync(): Promise<void> {
    const fd = this.descriptor();
    await new Promise<void>((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve())));
  }

  /** The WAL as it is now: SQLite deletes it when the last connection closes, so a new file gets a new descriptor. */
  private descriptor(): number {
    if (this.fd !== null && fs.fstatSync(this.fd).ino === fs.statSync(this.walFile).ino) return this.fd;
    this.close();
    this.fd = fs.openSync(this.walFile, 'r+');
    return this.fd;
  }
}
