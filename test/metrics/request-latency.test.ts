import test from 'ava';
import { Histogram, Registry } from 'prom-client';
import { RequestLatency } from '../../src/metrics/request-latency.js';

/** prom-client's own Histogram, set up as the service's was before RequestLatency replaced it. */
function promClientHistogram(registry: Registry): Histogram<'method' | 'route' | 'status'> {
  return new Histogram({
    name: 'gatehouse_http_request_duration_seconds', help: 'HTTP request latency by route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
}

const observations: Array<[string, string, number, number]> = [
  ['POST', '/v1/operations', 201, 0.0032],
  ['GET', '/v1/operations/:id', 200, 0.0004],
  ['POST', '/v1/operations', 200, 0.005], // on a bound: counted in that bound's bucket
  ['POST', '/v1/operations', 201, 0.0011],
  ['POST', '/v1/operations', 201, 12], // past every bound: only +Inf, the sum and the count
  ['GET', '/v1/operations/:id', 200, 0],
  ['POST', 'unmatched', 404, 0.0002],
  ['POST', '/v1/operations', 201, 0.31],
];

test('its /metrics text and JSON are those of prom-client\'s Histogram fed the same observations', async (t) => {
  const theirs = new Registry();
  const ours = new Registry();
  const histogram = promClientHistogram(theirs);
  const latency = new RequestLatency(ours);
  for (const [method, route, status, seconds] of observations) {
    histogram.observe({ method, route, status: String(status) }, seconds);
    latency.observe(method, route, status, seconds);
  }
  const text = await ours.metrics();
  t.is(text, await theirs.metrics());
  t.true(text.includes('gatehouse_http_request_duration_seconds_bucket{le="0.005",method="POST",route="/v1/operations",status="200"} 1'));
  t.true(text.includes('gatehouse_http_request_duration_seconds_count{method="POST",route="/v1/operations",status="201"} 4'));
  // prom-client's samples also carry `exemplar: null` (exemplars are off): not a value, left out.
  const withoutExemplars = (json: unknown) => JSON.parse(JSON.stringify(json, (key, value: unknown) => key === 'exemplar' ? undefined : value)) as unknown;
  t.deepEqual(withoutExemplars(await ours.getMetricsAsJSON()), withoutExemplars(await theirs.getMetricsAsJSON()));
});

test('reset empties it, as it empties prom-client\'s', async (t) => {
  const theirs = new Registry();
  const ours = new Registry();
  const histogram = promClientHistogram(theirs);
  const latency = new RequestLatency(ours);
  histogram.observe({ method: 'GET', route: '/healthz', status: '200' }, 0.001);
  latency.observe('GET', '/healthz', 200, 0.001);
  theirs.resetMetrics();
  ours.resetMetrics();
  t.is(await ours.metrics(), await theirs.metrics());
  t.false((await ours.metrics()).includes('/healthz'));
  latency.observe('GET', '/healthz', 503, 0.02);
  t.true((await ours.metrics()).includes('gatehouse_http_request_duration_seconds_count{method="GET",route="/healthz",status="503"} 1'));
});
