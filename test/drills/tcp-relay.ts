// A TCP relay between the service and PostgreSQL that a test can cut like a network partition:
// while cut, nothing flows either way and nothing is closed (no FIN, no RST: the packets just
// stop), and new connections are accepted but go nowhere. Healing lets everything flow again.
import net from 'node:net';

export class TcpRelay {
  readonly #server: net.Server;
  readonly #pairs = new Set<[net.Socket, net.Socket]>();
  #cut = false;
  port = 0;

  constructor(private readonly targetHost: string, private readonly targetPort: number) {
    this.#server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      const pair: [net.Socket, net.Socket] = [client, upstream];
      this.#pairs.add(pair);
      client.pipe(upstream);
      upstream.pipe(client);
      const drop = () => {
        this.#pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      if (this.#cut) this.#hold(pair);
    });
  }

  listen(): Promise<number> {
    return new Promise((resolve) => this.#server.listen(0, '127.0.0.1', () => {
      this.port = (this.#server.address() as net.AddressInfo).port;
      resolve(this.port);
    }));
  }

  /** Partition: every byte in either direction waits until `heal()`. */
  cut(): void {
    this.#cut = true;
    for (const pair of this.#pairs) this.#hold(pair);
  }

  heal(): void {
    this.#cut = false;
    for (const [a, b] of this.#pairs) {
      a.resume();
      b.resume();
    }
  }

  #hold([a, b]: [net.Socket, net.Socket]): void {
    a.pause();
    b.pause();
  }

  close(): Promise<void> {
    for (const [a, b] of this.#pairs) {
      a.destroy();
      b.destroy();
    }
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
