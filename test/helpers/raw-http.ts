// Raw bytes over a TCP connection, for requests no HTTP client would send (a malformed header,
// Content-Length with Transfer-Encoding) and for what a server writes on the wire.
import net from 'node:net';

export interface RawExchange {
  /** Everything the server wrote before it closed the connection (or before `waitMs` passed). */
  text: string;
  /** Whether the server closed the connection (its FIN: it will write no more); false when `waitMs` passed first. */
  closed: boolean;
  /** A socket error the client saw (ECONNRESET: the server reset the connection). */
  error: string | null;
}

/** Sends `request`, then each of `more` 5 ms apart while the connection is open, and reads until the server closes its side. */
export function rawExchange(url: string, request: string | Buffer, options: { more?: Array<string | Buffer>; waitMs?: number } = {}): Promise<RawExchange> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    const chunks: Buffer[] = [];
    let error: string | null = null;
    const done = (closed: boolean) => {
      clearTimeout(timer);
      clearInterval(pump);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed, error });
    };
    const timer = setTimeout(() => done(false), options.waitMs ?? 5_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('end', () => done(true));
    socket.on('close', () => done(true));
    socket.write(request);
    const more = [...(options.more ?? [])];
    const pump = setInterval(() => {
      const next = more.shift();
      if (next === undefined || !socket.writable) return clearInterval(pump);
      socket.write(next);
    }, 5);
  });
}

/** The status, lower-cased headers and body of each HTTP/1.1 answer in `text`, in order. */
export function parseAnswers(text: string): Array<{ status: number; headers: Record<string, string>; body: string }> {
  const answers: Array<{ status: number; headers: Record<string, string>; body: string }> = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    answers.push({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return answers;
}
