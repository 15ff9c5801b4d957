#!/bin/bash
# A browser on another origin: headless Chromium loads a page from one
# origin (a static server on its own port) whose script calls Phantom
# behind nginx on another origin with fetch (server/discover, tools/list,
# tools/call, each with the MCP headers that make the browser send a
# preflight). Without http.cors the browser refuses every call; with it the
# page reads all three results.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
CHROME=$(command -v chromium || command -v chromium-browser) || skip_all "chromium not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

B=$T_DIR/bin
mkdir -p "$B" "$T_DIR/site"
printf '#!/bin/sh\ncat >/dev/null; echo "{\\"content\\":[{\\"type\\":\\"text\\",\\"text\\":\\"hello from exec\\"}]}"\n' >"$B/hello.sh"
chmod +x "$B/hello.sh"
page_port=$(free_port)
PAGE_ORIGIN=http://localhost:$page_port

# browser_conf FILE CORS-LINE: the configuration, with or without http.cors
browser_conf() {
	cat >"$1" <<YAML
server: { name: browser-test, version: "1.0" }
workers: 2
http:
  $2
tools:
  - { name: hello, description: says hello, exec: [$B/hello.sh] }
YAML
}

# the page: three calls in a row, the outcome written into the document
write_page() {
	cat >"$T_DIR/site/index.html" <<HTML
<!doctype html><html><head><title>phantom</title></head><body><pre id="out">running</pre>
<script>
const U = "$1";
const meta = {"io.modelcontextprotocol/protocolVersion": "$MODERN",
              "io.modelcontextprotocol/clientCapabilities": {}};
async function call(id, method, params, name) {
  const h = {"Content-Type": "application/json", "MCP-Protocol-Version": "$MODERN", "Mcp-Method": method};
  if (name) h["Mcp-Name"] = name;
  const r = await fetch(U, {method: "POST", headers: h,
    body: JSON.stringify({jsonrpc: "2.0", id, method, params: Object.assign({_meta: meta}, params)})});
  return [r.status, await r.json()];
}
(async () => {
  const out = [];
  try {
    const [s1, d] = await call(1, "server/discover", {});
    out.push("discover=" + s1 + ":" + d.result.resultType);
    const [s2, l] = await call(2, "tools/list", {});
    out.push("list=" + s2 + ":" + l.result.tools.map(t => t.name).join(","));
    const [s3, c] = await call(3, "tools/call", {name: "hello", arguments: {}}, "hello");
    out.push("call=" + s3 + ":" + c.result.content[0].text);
  } catch (e) {
    out.push("error=" + e.name);
  }
  document.getElementById("out").textContent = "RES" + "ULT " + out.join(" ") + " E" + "ND";
})();
</script></body></html>
HTML
}

# the page's own origin: a static server on another port
(cd "$T_DIR/site" && exec python3 -m http.server --bind 127.0.0.1 "$page_port") >"$T_DIR/site.log" 2>&1 &
T_PIDS+=("$!")
wait_port "$page_port" || { echo "not ok 1 - the page server starts"; exit 1; }

# browse: loads the page in headless Chromium; prints its RESULT line
browse() {
	local prof=$T_DIR/chrome-$RANDOM
	timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--no-first-run --user-data-dir="$prof" --virtual-time-budget=15000 \
		--dump-dom "$PAGE_ORIGIN/index.html" 2>"$prof.log" | grep -o 'RESULT.*END'
}

# ---- without http.cors ---------------------------------------------------------------
browser_conf "$T_DIR/nocors.yaml" 'max_body: 65536'
phantom_unix "$T_DIR/nocors.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok 1 - nginx starts"; exit 1; }
write_page "$NGINX_URL"
got=$(browse)
is "$got" "RESULT error=TypeError END" "without http.cors the browser blocks the cross-origin call"
STATUS=$(curl -s -o "$T_DIR/pre.json" -w '%{http_code}' -X OPTIONS -H "Origin: $PAGE_ORIGIN" \
	-H 'Access-Control-Request-Method: POST' "$NGINX_URL")
is "$STATUS" 405 "without http.cors a preflight gets 405"
like "$(jq -r .error.message "$T_DIR/pre.json")" 'CORS preflight and http\.cors is not set; .*set http\.cors\.origins' \
	"... whose message says to set http.cors.origins"
mpost "$NGINX_URL" 4 server/discover '{}'
is "$STATUS" 200 "the next request is served"
kill "$PH_PID"; wait_gone "$PH_PID"

# ---- with http.cors --------------------------------------------------------------------
browser_conf "$T_DIR/cors.yaml" "cors: { origins: [\"$PAGE_ORIGIN\"], max_age: 120 }"
phantom_unix "$T_DIR/cors.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok - nginx starts"; exit 1; }
write_page "$NGINX_URL"
got=$(browse)
is "$got" "RESULT discover=200:complete list=200:hello call=200:hello from exec END" \
	"with http.cors the page reads discover, tools/list and tools/call"

# the preflight as the browser sent it, checked header by header
hdr=$T_DIR/pre.h
STATUS=$(curl -s -o /dev/null -D "$hdr" -w '%{http_code}' -X OPTIONS -H "Origin: $PAGE_ORIGIN" \
	-H 'Access-Control-Request-Method: POST' \
	-H 'Access-Control-Request-Headers: content-type,mcp-protocol-version,mcp-method,mcp-name,mcp-param-region' \
	"$NGINX_URL")
HEADERS=$(tr -d '\r' <"$hdr")
is "$STATUS" 204 "preflight from an allowed origin: 204"
is "$(header Access-Control-Allow-Origin)" "$PAGE_ORIGIN" "preflight: Allow-Origin is the origin itself"
like "$(header Access-Control-Allow-Methods)" 'POST, GET, DELETE, OPTIONS' "preflight: Allow-Methods"
allow=$(header Access-Control-Allow-Headers)
for h in Content-Type Authorization MCP-Protocol-Version Mcp-Method Mcp-Name Mcp-Session-Id Last-Event-ID mcp-param-region; do
	like "$allow" "(^|, )$h(,|$)" "preflight: Allow-Headers has $h"
done
is "$(header Access-Control-Max-Age)" 120 "preflight: Max-Age is http.cors.max_age"

mpost "$NGINX_URL" 5 server/discover '{}' -H "Origin: $PAGE_ORIGIN"
is "$STATUS" 200 "an actual request from the origin is served"
is "$(header Access-Control-Allow-Origin)" "$PAGE_ORIGIN" "actual response: Allow-Origin"
like "$(header Access-Control-Expose-Headers)" 'Mcp-Session-Id, WWW-Authenticate' "actual response: Expose-Headers"

STATUS=$(curl -s -o /dev/null -w '%{http_code}' -X OPTIONS -H 'Origin: http://evil.example.com' \
	-H 'Access-Control-Request-Method: POST' "$NGINX_URL")
is "$STATUS" 403 "a preflight from another origin gets 403"
mpost "$NGINX_URL" 6 server/discover '{}' -H 'Origin: http://evil.example.com'
is "$STATUS" 403 "a POST from another origin gets 403 as before"
is "$(header Access-Control-Allow-Origin)" "" "and no CORS header"
still_serving "$NGINX_URL" "a refused origin"
done_testing
