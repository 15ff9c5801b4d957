// A collector stand-in for tests/integration/telemetry.sh: receives OTLP/HTTP
// and decodes it with the OpenTelemetry project's own message definitions
// (the protobufjs root @opentelemetry/otlp-transformer generates from
// opentelemetry-proto), never with a decoder of ours. Each span and each
// histogram data point goes to OUT as one JSON line. FAIL_FIRST=N answers the
// first N export requests 503 (Retry-After: 1); the port it listens on is
// written to PORT_FILE. COUNT_ONLY=1 (the bench) only records each request's
// size, so that decoding does not take the CPU the server is measured on.
// TLS_CERT and TLS_KEY (PEM files) make it serve https.
'use strict';
const http = require('http');
const https = require('https');
const zlib = require('zlib');
const fs = require('fs');
const path = require('path');
const npm = process.env.PHANTOM_NPM_DIR || '/var/cache/phantom-npm';
const root = require(path.join(npm, 'node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js'));
const svc = root.opentelemetry.proto.collector;
const out = process.env.OUT;
let failFirst = parseInt(process.env.FAIL_FIRST || '0', 10);

const hex = (b) => Buffer.from(b || []).toString('hex');
function anyValue(v) {
  if (v == null) return null;
  if (v.stringValue != null) return v.stringValue;
  if (v.intValue != null) return Number(v.intValue);
  if (v.boolValue != null) return v.boolValue;
  if (v.doubleValue != null) return v.doubleValue;
  return null;
}
const attrs = (list) => Object.fromEntries((list || []).map((kv) => [kv.key, anyValue(kv.value)]));
function emit(o) { fs.appendFileSync(out, JSON.stringify(o) + '\n'); }

function traces(buf) {
  const req = svc.trace.v1.ExportTraceServiceRequest.decode(buf);
  for (const rs of req.resourceSpans) {
    const res = attrs(rs.resource && rs.resource.attributes);
    // the keys as sent, in order: a repeated one shows here, not in res
    const resKeys = ((rs.resource && rs.resource.attributes) || []).map((kv) => kv.key);
    for (const ss of rs.scopeSpans) for (const s of ss.spans) {
      emit({ kind: 'span', resource: res, resourceKeys: resKeys, scope: ss.scope && ss.scope.name,
        traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId),
        name: s.name, spanKind: s.kind, start: String(s.startTimeUnixNano), end: String(s.endTimeUnixNano),
        attributes: attrs(s.attributes),
        links: (s.links || []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
        status: { code: (s.status && s.status.code) || 0, message: (s.status && s.status.message) || '' } });
    }
  }
}
function metrics(buf) {
  const req = svc.metrics.v1.ExportMetricsServiceRequest.decode(buf);
  for (const rm of req.resourceMetrics) for (const sm of rm.scopeMetrics) for (const m of sm.metrics) {
    if (!m.histogram) continue;
    for (const dp of m.histogram.dataPoints) emit({ kind: 'point', name: m.name, unit: m.unit,
      temporality: m.histogram.aggregationTemporality, attributes: attrs(dp.attributes),
      count: Number(dp.count), sum: dp.sum, bounds: dp.explicitBounds, buckets: dp.bucketCounts.map(Number) });
  }
}
// The OTLP JSON a handler's own instrumentation posts (the exec tool of the
// test): ids are hex there.
function jsonTraces(text) {
  const req = JSON.parse(text);
  for (const rs of req.resourceSpans || []) for (const ss of rs.scopeSpans || []) for (const s of ss.spans || []) {
    emit({ kind: 'span', resource: {}, scope: ss.scope && ss.scope.name, traceId: s.traceId, spanId: s.spanId,
      parentSpanId: s.parentSpanId || '', name: s.name, spanKind: s.kind, attributes: attrs(s.attributes),
      links: [], status: s.status || { code: 0 } });
  }
}

function handle(q, r) {
  const chunks = [];
  q.on('data', (c) => chunks.push(c));
  q.on('end', () => {
    let body = Buffer.concat(chunks);
    fs.appendFileSync(out + '.requests', JSON.stringify({ url: q.url, encoding: q.headers['content-encoding'] || '',
      type: q.headers['content-type'], auth: q.headers['x-test-token'] || '', bytes: body.length,
      port: q.socket.remotePort }) + '\n');
    if (process.env.COUNT_ONLY) { // the bench: bytes counted, nothing decoded
      r.writeHead(200);
      r.end();
      return;
    }
    if (failFirst > 0) {
      failFirst--;
      r.writeHead(503, { 'Retry-After': '1' });
      r.end();
      return;
    }
    try {
      if (q.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
      if ((q.headers['content-type'] || '').startsWith('application/json')) jsonTraces(body.toString());
      else if (q.url === '/v1/traces') traces(body);
      else if (q.url === '/v1/metrics') metrics(body);
      else { r.writeHead(404); r.end(); return; }
    } catch (e) {
      fs.appendFileSync(out + '.errors', String(e && e.stack || e) + '\n');
      r.writeHead(400); r.end(); return;
    }
    r.writeHead(200, { 'Content-Type': 'application/x-protobuf' });
    r.end();
  });
}
const server = process.env.TLS_CERT
  ? https.createServer({ cert: fs.readFileSync(process.env.TLS_CERT), key: fs.readFileSync(process.env.TLS_KEY) }, handle)
  : http.createServer(handle);
server.listen(parseInt(process.env.PORT || '0', 10), '127.0.0.1', () => {
  fs.writeFileSync(process.env.PORT_FILE, String(server.address().port));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
