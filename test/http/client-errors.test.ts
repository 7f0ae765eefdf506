import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { parseAnswers, rawExchange } from '../helpers/raw-http.js';

// Requests Node's HTTP parser refuses never reach Koa (src/http/client-error.ts): they are
// answered with the service's JSON errors, and the connection closed.

const malformed: Array<[string, string]> = [
  ['a header name that is not a token', 'GET /v1/healthz HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n'],
  ['Content-Length together with Transfer-Encoding', 'POST /v1/operations HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
  ['a DEL byte in a header value', 'GET /v1/healthz HTTP/1.1\r\nHost: x\r\nX-Note: a\x7fb\r\n\r\n'],
];

for (const [situation, request] of malformed) {
  test(`[sqlite] ${situation}: answers 400 invalid_request as JSON and closes the connection`, async (t) => {
    const app = await startTestApp(t, 'sqlite');
    const exchange = await rawExchange(app.url, request);
    t.true(exchange.closed, 'the connection is closed');
    const answers = parseAnswers(exchange.text);
    t.is(answers.length, 1, exchange.text);
    const [answer] = answers;
    t.is(answer!.status, 400);
    t.is(answer!.headers['content-type'], 'application/json');
    t.is(answer!.headers.connection, 'close');
    const body = JSON.parse(answer!.body);
    t.is(body.error.code, 'invalid_request');
    t.regex(body.error.message, /not well-formed HTTP/);
  });
}

test('[sqlite] an HTTP/1.1 request without a Host header: 400 invalid_request as JSON, closed; HTTP/1.0 needs none', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const exchange = await rawExchange(app.url, 'GET /v1/healthz HTTP/1.1\r\n\r\n');
  t.true(exchange.closed, 'the connection is closed');
  const [answer] = parseAnswers(exchange.text);
  t.is(answer?.status, 400, exchange.text);
  t.is(answer!.headers['content-type'], 'application/json');
  t.is(answer!.headers.connection, 'close');
  t.deepEqual(JSON.parse(answer!.body).error, { code: 'invalid_request', message: 'an HTTP/1.1 request must carry a Host header' });
  const old = await rawExchange(app.url, 'GET /v1/healthz HTTP/1.0\r\n\r\n');
  t.is(parseAnswers(old.text)[0]?.status, 200, old.text);
});

test('[sqlite] headers past the parser\'s limit: answers 431 headers_too_large as JSON and closes the connection', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const exchange = await rawExchange(app.url, `GET /v1/healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  t.true(exchange.closed);
  const [answer] = parseAnswers(exchange.text);
  t.is(answer?.status, 431, exchange.text);
  t.is(answer!.headers['content-type'], 'application/json');
  t.is(answer!.headers.connection, 'close');
  t.is(JSON.parse(answer!.body).error.code, 'headers_too_large');
});

test('[sqlite] a client that goes on sending after its malformed request still reads the answer, once, without a reset', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const more = Array.from({ length: 40 }, () => 'x'.repeat(4096));
  const exchange = await rawExchange(app.url, 'GET /v1/healthz HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n', { more });
  const answers = parseAnswers(exchange.text);
  t.is(answers.length, 1, exchange.text.slice(0, 500));
  t.is(answers[0]!.status, 400);
  t.true(exchange.closed);
  t.is(exchange.error, null);
});

test('[sqlite] after a refused request the service answers the next connection as usual', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  await rawExchange(app.url, 'GET /v1/healthz HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n');
  t.is((await app.request('GET', '/v1/healthz')).status, 200);
});

test('[sqlite] a request whose headers stop arriving is answered 400 and closed at the documented 10 s, not up to 40 s later', async (t) => {
  const app = await startTestApp(t, 'sqlite');
  const began = Date.now();
  // The request line, then nothing: the headers never end.
  const exchange = await rawExchange(app.url, 'POST /v1/operations HTTP/1.1\r\nHost: x\r\n', { waitMs: 20_000 });
  const seconds = (Date.now() - began) / 1000;
  t.true(exchange.closed, `still open after ${seconds} s`);
  t.true(seconds >= 9.5 && seconds <= 15, `closed after ${seconds} s`);
  t.is(parseAnswers(exchange.text)[0]?.status, 400, exchange.text);
});
