import test from 'ava';
import { RouteError, validateMethod, validateRoute } from '../../../src/core/route.js';

const accepted: [string, string][] = [
  ['/', 'the root route'],
  ['/v1/payments', 'plain segments'],
  ['/v1/payments/pay_123', 'an id segment'],
  ['/a-b.c_d~e', 'unreserved punctuation'],
  ["/!$&'()*+,;=:@", 'sub-delims, colon and at sign'],
  ['/users/a%2Fb', 'an encoded slash'],
  ['/files/my%20file', 'an encoded space'],
  ['/q/%3F%23%25', "encoded '?', '#' and '%'"],
  ['/caf%C3%A9', 'encoded UTF-8 bytes'],
  ['/a/.b/..c/...', "segments that only start with dots, and '...'"],
  ['/v1/ledger:verify', 'a colon inside a segment'],
];

const refused: [unknown, string, RegExp][] = [
  ['', 'an empty route', /must not be empty/],
  ['v1/payments', 'a route without a leading slash', /must start with '\/'/],
  ['https://api.example.com/v1', 'an absolute URL', /must start with '\/'/],
  ['/v1/payments?limit=1', 'a query string', /query string/],
  ['/v1/payments?', 'an empty query string', /query string/],
  ['/v1/payments#top', 'a fragment', /fragment/],
  ['/v1//payments', 'an empty segment', /empty segment/],
  ['//v1', 'an empty first segment', /empty segment/],
  ['/v1/./payments', "a '.' segment", /'\.' segment/],
  ['/v1/../admin', "a '..' segment", /'\.\.' segment/],
  ['/..', "a lone '..' segment", /'\.\.' segment/],
  ['/.', "a lone '.' segment", /'\.' segment/],
  ['/v1/payments/', 'a trailing slash', /must not end with '\/'/],
  ['/v1/pay ments', 'a raw space', /U\+0020/],
  ['/v1/\tpayments', 'a tab', /U\+0009/],
  ['/v1/\u007f', 'DEL', /U\+007F/],
  ['/caf\u00e9', 'a raw non-ASCII character', /U\+00E9/],
  ['/\u{1f600}', 'a raw emoji', /U\+1F600/],
  ['/a\\b', 'a backslash', /'\\'/],
  ['/a"b', 'a double quote', /'"'/],
  ['/a<b>', 'angle brackets', /'<'/],
  ['/a[0]', 'square brackets', /'\['/],
  ['/a{b}', 'curly braces', /'\{'/],
  ['/a|b', 'a pipe', /'\|'/],
  ['/a^b', 'a caret', /'\^'/],
  ['/a`b', 'a backtick', /'`'/],
  ['/users/a%2fb', 'lower-case hex in a percent escape', /upper-case hex/],
  ['/%7e', 'lower-case hex encoding an unreserved character', /upper-case hex/],
  ['/%41', 'an encoded letter', /unreserved character 'A'/],
  ['/%7E', 'an encoded tilde', /unreserved character '~'/],
  ['/%2E%2E', 'encoded dots', /unreserved character '\.'/],
  ['/%2D%5F%30', 'an encoded hyphen', /unreserved character '-'/],
  ['/a%', 'a bare percent sign at the end', /malformed percent escape/],
  ['/a%2', 'a percent escape with one hex digit', /malformed percent escape/],
  ['/a%G0', 'a percent escape with a non-hex digit', /malformed percent escape/],
  ['/a%%20', 'a doubled percent sign', /malformed percent escape/],
  [42, 'a number', /must be a string/],
  [null, 'null', /must be a string/],
  [['/v1'], 'an array', /must be a string/],
];

for (const [route, situation] of accepted) {
  test(`route with ${situation} (${route}) is accepted unchanged`, (t) => {
    t.is(validateRoute(route), route);
  });
}

for (const [route, situation, message] of refused) {
  test(`route with ${situation} (${JSON.stringify(route)}) is refused as invalid_route`, (t) => {
    const error = t.throws(() => validateRoute(route), { instanceOf: RouteError });
    t.is(error?.code, 'invalid_route');
    t.is(error?.member, 'route');
    t.regex(error?.message ?? '', message);
  });
}

test('methods that are HTTP tokens are accepted and upper-cased', (t) => {
  t.is(validateMethod('POST'), 'POST');
  t.is(validateMethod('post'), 'POST');
  t.is(validateMethod('Patch'), 'PATCH');
  t.is(validateMethod('M-SEARCH'), 'M-SEARCH');
  t.is(validateMethod("x!#$%&'*+-.^_`|~9"), "X!#$%&'*+-.^_`|~9");
});

const badMethods: [unknown, string][] = [
  ['', 'an empty method'],
  ['GET ', 'a method with a trailing space'],
  ['PO ST', 'a method with a space inside'],
  ['GET\r\n', 'a method with CRLF'],
  ['GET/1', 'a method with a slash'],
  ['(GET)', 'a method with parentheses'],
  ['G:T', 'a method with a colon'],
  ['PÖST', 'a method with a non-ASCII letter'],
  ['\u212a', 'the Kelvin sign, which upper-cases to no ASCII letter'],
  [undefined, 'a missing method'],
  [1, 'a numeric method'],
];

for (const [method, situation] of badMethods) {
  test(`${situation} is refused as invalid_request naming method`, (t) => {
    const error = t.throws(() => validateMethod(method), { instanceOf: RouteError });
    t.is(error?.code, 'invalid_request');
    t.is(error?.member, 'method');
    t.regex(error?.message ?? '', /^method /);
  });
}
