// OpenTelemetry: allowed and refused requests per limit as a metric, from the limiter's `decision`
// listener. Instrumentation needs only @opentelemetry/api; the application sets up the SDK and
// its exporter (OTLP, Prometheus, ...): here @opentelemetry/sdk-metrics, keeping them in memory.
import { metrics, type Attributes } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { RateLimiter } from 'ratewarden';

/**
 * Counts the limiter's decisions in `ratewarden.decisions`, by limit name, tier, outcome and
 * shadow mode (never by key: one series per client would swamp the metrics backend). Call it
 * once the SDK is set up: a meter taken before then is a no-op one. Returns the unsubscribe.
 */
function countDecisions(limiter: RateLimiter): () => void {
  const decisions = metrics.getMeter('ratewarden').createCounter('ratewarden.decisions', {
    description: 'Rate-limit decisions, by limit, tier, outcome and shadow mode',
    unit: '{request}',
  });
  return limiter.on('decision', (_key, result, _cost, info) => {
    const attributes: Attributes = {};
    if (info.name !== undefined) attributes['ratewarden.limit'] = info.name;
    if (info.tier !== undefined) attributes['ratewarden.tier'] = info.tier;
    attributes['ratewarden.outcome'] = result.allowed ? 'allowed' : 'refused';
    attributes['ratewarden.shadow'] = info.shadow;
    decisions.add(1, attributes);
  });
}

// The demo: the SDK with an in-memory exporter, then three requests each from a free user, a pro
// user, and a free user whose limit is only watched (shadow: decided and counted, never enforced).
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const provider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter })] });
metrics.setGlobalMeterProvider(provider);

const pro = { tier: 'pro', threshold: 100, windowSeconds: 60 };
const limiter = new RateLimiter({
  name: 'api',
  tier: 'free', // the default quota's tier
  threshold: 2,
  windowSeconds: 60,
  limitFor: (_user, key) => (key === 'bob' ? pro : undefined),
});
countDecisions(limiter);
for (let i = 0; i < 3; i++) {
  await limiter.allowRequest('alice');
  await limiter.allowRequest('bob');
  await limiter.allowRequest('carol', { shadow: true });
}

await provider.forceFlush();
for (const { scopeMetrics } of exporter.getMetrics()) {
  for (const { metrics: collected } of scopeMetrics) {
    for (const { descriptor, dataPoints } of collected) {
      for (const point of dataPoints) console.log(descriptor.name, JSON.stringify(point.attributes), point.value);
    }
  }
}
await provider.shutdown();
