import test from 'ava';
import { urlForLog, withoutUserinfo } from '../../src/core/url-for-log.js';

test('withoutUserinfo takes user:password@ out of every URL in a text, and leaves the rest as it was', (t) => {
  t.is(
    withoutUserinfo('TypeError: Request cannot be constructed from a URL that includes credentials: http://user:pass@127.0.0.1:18731/hook'),
    'TypeError: Request cannot be constructed from a URL that includes credentials: http://127.0.0.1:18731/hook',
  );
  t.is(withoutUserinfo('a http://a:1@x.example/p and HTTPS://robot@y.example?q=1#f'), 'a http://x.example/p and HTTPS://y.example?q=1#f');
  t.is(withoutUserinfo('http://user:p@ss@host.example/hook'), 'http://host.example/hook', 'a raw @ in the password: up to the last @ of the authority');
  t.is(withoutUserinfo('mail me@example.com about http://host.example/a@b'), 'mail me@example.com about http://host.example/a@b', 'an @ outside a URL\'s authority stays');
  t.is(withoutUserinfo('connect ECONNREFUSED 127.0.0.1:1'), 'connect ECONNREFUSED 127.0.0.1:1');
});

test('urlForLog shows origin and path only: no userinfo, query or fragment', (t) => {
  t.is(urlForLog('http://user:pass@127.0.0.1:18731/hook?token=abc#x'), 'http://127.0.0.1:18731/hook');
  t.is(urlForLog('https://hooks.example.com'), 'https://hooks.example.com/');
  t.is(urlForLog('not a url'), '(not a URL)');
});
