#!/bin/bash
# MCP Apps (io.modelcontextprotocol/ui) on the wire, behind the shipped
# nginx configuration, in both eras: 2026-07-28 stateless requests and a
# 2025-11-25 session opened with initialize. The capability is declared only
# with an app; tools/list carries _meta.ui (resourceUri, visibility) and
# the flat ui/resourceUri beside the tool's own _meta; the ui:// resource's
# list entry and read item carry the exact MIME type and equal _meta.ui;
# the body is the file, byte for byte. A versioned app gets a new uri when
# its file changes (SIGHUP) and its old uri still resolves.
# server.app_meta: declared, over stdio in both eras. The Inspector CLI's
# --app-info reports the app, and with server.app_meta: declared only when
# it advertises the extension (--advertise-apps). -t catches each load-time
# error, with its file and line. About 35 s, most of it the Inspector.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"

MIME='text/html;profile=mcp-app'
UI=io.modelcontextprotocol/ui
D=$T_DIR
printf '#!/bin/sh\ncat >/dev/null; echo "{\\"content\\":[{\\"type\\":\\"text\\",\\"text\\":\\"tick\\"}]}"\n' >"$D/now.sh"
chmod +x "$D/now.sh"
# a view with multi-byte text, a tab and a trailing blank line: served as is
printf '<!doctype html>\n<html><head><meta charset="utf-8"><style>p{color:red}</style></head>\n<body><p>horloge \xc3\xa0 l\xe2\x80\x99heure\t\xf0\x9f\x95\x92</p>\n<script src="https://cdn.example.com/x.js"></script><link rel="icon" href="data:,">\n<!-- <script src="commented-out.js"></script> -->\n</body></html>\n\n' >"$D/clock.html"
printf '<!doctype html><html><body>version one</body></html>\n' >"$D/stamped.html"

cat >"$D/apps.yaml" <<YAML
server: { name: "apps test", version: "1.0" }
workers: 2
apps:
  clock:
    file: clock.html
    csp:
      connect: [https://api.example.com, "wss://live.example.com:8443"]
      resource: ["https://*.cdn.example.com"]
      frame: [https://frames.example.com]
      base_uri: [https://base.example.com]
    permissions: [clipboardWrite, camera]
    domain: abc123.example-content.com
    prefers_border: true
  stamped:
    file: stamped.html
    uri: ui://custom/stamped
    versioned: true
tools:
  - { name: now, exec: [./now.sh], app: clock, _meta: { "example.com/own": 7 } }
  - { name: refresh, exec: [./now.sh], app: clock, visibility: [app] }
  - { name: model_only, exec: [./now.sh], app: clock, visibility: model }
  - { name: stamp, exec: [./now.sh], app: stamped }
  - { name: plain, exec: [./now.sh], _meta: { "example.com/own": 1 } }
YAML
EXPECT_UI='{"csp":{"connectDomains":["https://api.example.com","wss://live.example.com:8443"],"resourceDomains":["https://*.cdn.example.com"],"frameDomains":["https://frames.example.com"],"baseUriDomains":["https://base.example.com"]},"permissions":{"clipboardWrite":{},"camera":{}},"domain":"abc123.example-content.com","prefersBorder":true}'
CLOCK=ui://apps-test/clock
digest() { sha256sum "$1" | cut -c1-16; }

behind_nginx phantom_up "$D/apps.yaml"

# tools_checks ERA: the tools/list in BODY
tools_checks() {
	local era=$1
	is "$(jqr '.result.tools[]|select(.name=="now")._meta|[.ui.resourceUri, .["ui/resourceUri"], (.ui.visibility|join("+")), .["example.com/own"]]|map(tostring)|join(" ")')" \
		"$CLOCK $CLOCK model+app 7" "$era: tools/list: _meta.ui.resourceUri, the flat ui/resourceUri, visibility [model, app] and the tool's own _meta key"
	is "$(jqr '[.result.tools[]|select(.name=="refresh" or .name=="model_only")|"\(.name)=\(._meta.ui.visibility|join("+"))"]|join(" ")')" \
		"refresh=app model_only=model" "$era: an app-only tool stays listed with [app]; a model-only one has [model]"
	is "$(jqr '.result.tools[]|select(.name=="plain")._meta|keys|join(",")')" "example.com/own" \
		"$era: a tool without an app keeps its _meta, with nothing added"
}
# resource_checks ERA URI EXPECTED-UI FILE: the list entry (in LISTED) and
# the read item (in BODY) of URI
resource_checks() {
	local era=$1 uri=$2 ui=$3 file=$4 entry item
	entry=$(jq -c --arg u "$uri" '.result.resources[]|select(.uri==$u)' <<<"$LISTED")
	item=$(jqr '.result.contents[0]')
	is "$(jq -r .mimeType <<<"$entry")" "$MIME" "$era: resources/list: $uri has mimeType $MIME exactly"
	is "$(jq -c ._meta.ui <<<"$entry")" "$(jq -c . <<<"$ui")" "$era: resources/list: its _meta.ui (csp, permissions, domain, prefersBorder)"
	is "$(jqr '.result.contents|length')/$(jq -r '"\(.uri) \(.mimeType)"' <<<"$item")" "1/$uri $MIME" \
		"$era: resources/read: one content item, the uri and mimeType exactly"
	is "$(jq -c ._meta.ui <<<"$item")" "$(jq -c ._meta.ui <<<"$entry")" "$era: resources/read: the item's _meta.ui equals the list entry's"
	jq -j .text <<<"$item" >"$D/served"
	cmp -s "$D/served" "$file"
	ok "$era: resources/read: the text is byte-equal to $(basename "$file")"
}

# ---- 2026-07-28 ----------------------------------------------------------------------------
mcall "$U" 1 server/discover '{}'
is "$(jqr ".result.capabilities|[(.extensions[\"$UI\"]|tojson), has(\"tools\"), has(\"resources\")]|map(tostring)|join(\" \")")" \
	"{} true true" "2026-07-28: server/discover declares extensions[\"$UI\"] = {} with tools and resources"
mcall "$U" 2 tools/list '{}'
tools_checks 2026-07-28
STAMP=ui://custom/stamped?v=$(digest "$D/stamped.html")
is "$(jqr '.result.tools[]|select(.name=="stamp")._meta.ui.resourceUri')" "$STAMP" \
	"versioned: the uri ends in ?v= and 16 hex digits of the file's SHA-256"
mcall "$U" 3 resources/list '{}'
LISTED=$BODY
mcall "$U" 4 resources/read "{\"uri\":\"$CLOCK\"}"
resource_checks 2026-07-28 "$CLOCK" "$EXPECT_UI" "$D/clock.html"
is "$(jqr '"\(.result.resultType) \(.result.ttlMs|type) \(.result.cacheScope)"')" "complete number private" \
	"2026-07-28: resources/read has resultType, ttlMs and cacheScope"
mcall "$U" 5 resources/read "{\"uri\":\"$STAMP\"}"
resource_checks "2026-07-28, versioned" "$STAMP" '{"csp":{}}' "$D/stamped.html"
mcall "$U" 6 tools/call '{"name":"refresh","arguments":{}}'
is "$STATUS/$(jqr '.result.content[0].text')" "200/tick" "an app-only tool can be called"

# ---- 2025-11-25 ----------------------------------------------------------------------------
V=(-H "MCP-Protocol-Version: 2025-11-25")
lbody() { jq -nc --argjson id "$1" --arg m "$2" --argjson p "${3:-{\}}" '{jsonrpc:"2.0",id:$id,method:$m,params:$p}'; }
post "$U" "$(lbody 1 initialize '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}')"
SID=$(header Mcp-Session-Id)
is "$(jqr ".result.capabilities|[(.extensions[\"$UI\"]|tojson), has(\"tools\"), has(\"resources\")]|map(tostring)|join(\" \")")" \
	"{} true true" "2025-11-25: initialize declares extensions[\"$UI\"] = {} with tools and resources"
S=(-H "Mcp-Session-Id: $SID")
post "$U" '{"jsonrpc":"2.0","method":"notifications/initialized"}' "${V[@]}" "${S[@]}"
post "$U" "$(lbody 2 tools/list)" "${V[@]}" "${S[@]}"
tools_checks 2025-11-25
post "$U" "$(lbody 3 resources/list)" "${V[@]}" "${S[@]}"
LISTED=$BODY
post "$U" "$(lbody 4 resources/read "{\"uri\":\"$CLOCK\"}")" "${V[@]}" "${S[@]}"
resource_checks 2025-11-25 "$CLOCK" "$EXPECT_UI" "$D/clock.html"

# ---- a versioned app after a change -------------------------------------------------------
printf '<!doctype html><html><body>version two</body></html>\n' >"$D/stamped.html"
STAMP2=ui://custom/stamped?v=$(digest "$D/stamped.html")
stamp_uri() { mcall "$U" 7 tools/list '{}'; jqr '.result.tools[]|select(.name=="stamp")._meta.ui.resourceUri'; }
kill -HUP "$PH_PID"
for _ in $(seq 1 100); do
	[ "$(stamp_uri)" = "$STAMP2" ] && [ "$(stamp_uri)" = "$STAMP2" ] && break
	sleep 0.05
done
[ "$STAMP2" != "$STAMP" ]
ok "versioned: the changed file has another digest"
is "$(stamp_uri)" "$STAMP2" "versioned: after SIGHUP the tool points at the new uri"
mcall "$U" 8 resources/read "{\"uri\":\"$STAMP2\"}"
is "$(jqr '.result.contents[0].text')" '<!doctype html><html><body>version two</body></html>' "versioned: the new uri serves the new file"
mcall "$U" 9 resources/read "{\"uri\":\"$STAMP\"}"
is "$STATUS/$(jqr '.result.contents[0]|"\(.uri) \(.mimeType) \(.text|test("version two"))"')" "200/$STAMP $MIME true" \
	"versioned: the old uri still resolves, under its own uri, to the file as it is now"
mcall "$U" 10 resources/read '{"uri":"ui://custom/stamped?v=zz"}'
is "$(jqr .error.code)" -32602 "versioned: a uri that is no digest of this form is not found"
mcall "$U" 10 resources/read "{\"uri\":\"ui://custom/stamped&v=${STAMP2##*v=}\"}"
is "$(jqr .error.code)" -32602 "versioned: &v= in a uri without a query is not found (only ?v= is)"

# a reload whose app file is gone fails and the running apps stay
sed -i 's/file: stamped.html/file: gone.html/' "$D/apps.yaml"
kill -HUP "$PH_PID"
wait_for 5 grep -q "reload failed" "$PH_LOG"
like "$(grep -A3 'gone.html' "$PH_LOG" | head -3)" "apps\.stamped: file: cannot read '$D/gone\.html'" \
	"a reload with a missing app file logs the problem with its key"
like "$(cat "$PH_LOG")" "reload failed" "and fails"
mcall "$U" 11 resources/read "{\"uri\":\"$STAMP2\"}"
is "$STATUS/$(jqr '.result.contents[0].mimeType')" "200/$MIME" "the running app is still served"
sed -i 's/file: gone.html/file: stamped.html/' "$D/apps.yaml"

# ---- no app: no capability -----------------------------------------------------------------
cat >"$D/none.yaml" <<YAML
server: { name: none, version: "1.0" }
tools:
  - { name: plain, exec: [$D/now.sh] }
resources:
  - { uri: "docs://a", text: hello }
YAML
stdio() { "$PHANTOM" -c "$1" --stdio 2>>"$D/stdio.err"; }
INIT_L=$(lbody 1 initialize '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}')
OUT=$({ mbody 1 server/discover; echo; } | stdio "$D/none.yaml")
is "$(jq -c '.result.capabilities.extensions // {}|has("'$UI'")' <<<"$OUT")/$(jq -c '.result.capabilities|has("tools")' <<<"$OUT")" \
	"false/true" "2026-07-28 without apps: no $UI capability"
OUT=$(printf '%s\n' "$INIT_L" | stdio "$D/none.yaml")
is "$(jq -c '.result.capabilities.extensions // {}|has("'$UI'")' <<<"$OUT")" "false" "2025-11-25 without apps: no $UI capability"

# ---- server.app_meta: declared --------------------------------------------------------------
sed 's/^server: { name: "apps test", version: "1.0" }/server: { name: "apps test", version: "1.0", app_meta: declared }/' \
	"$D/apps.yaml" >"$D/declared.yaml"
DECL='{"extensions":{"'$UI'":{"mimeTypes":["'$MIME'"]}}}'
OUT=$({ mbody 1 tools/list; echo; mbody 2 resources/read "{\"uri\":\"$CLOCK\"}"; echo; mbody 3 server/discover; echo; } | (cd "$D" && stdio declared.yaml))
is "$(jq -sc '[.[0].result.tools[]|select(.name=="now")._meta], (.[1].result.contents[0]|has("_meta")), (.[2].result.capabilities.extensions|has("'$UI'"))' <<<"$OUT" | tr '\n' ' ')" \
	'[{"example.com/own":7}] false true ' "declared: a request without the extension gets the tool's own _meta only, no _meta.ui, and the capability"
OUT=$({ CAPS=$DECL mbody 1 tools/list; echo; CAPS=$DECL mbody 2 resources/read "{\"uri\":\"$CLOCK\"}"; echo; } | (cd "$D" && stdio declared.yaml))
is "$(jq -sc '[.[0].result.tools[]|select(.name=="now")._meta.ui.resourceUri], .[1].result.contents[0]._meta.ui.prefersBorder' <<<"$OUT" | tr '\n' ' ')" \
	"[\"$CLOCK\"] true " "declared: a 2026-07-28 request declaring the extension gets the metadata"
INIT_D=$(lbody 1 initialize "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":$DECL,\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}")
OUT=$({ echo "$INIT_D"; lbody 2 tools/list; echo; } | (cd "$D" && stdio declared.yaml))
is "$(jq -sc '.[1].result.tools[]|select(.name=="now")._meta["ui/resourceUri"]' <<<"$OUT")" "\"$CLOCK\"" \
	"declared: a 2025-11-25 client declaring it at initialize gets the metadata"

# ---- the Inspector CLI's --app-info -----------------------------------------------------------
INSPECTOR=
if node_setup; then
	INSPECTOR=$NODE_DIR/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
	[ -f "$INSPECTOR" ] || INSPECTOR=
fi
if [ -n "$INSPECTOR" ]; then
	mkdir -p "$D/home"
	inspector() {
		OUT=$(cd "$D" && HOME=$D/home timeout 90 "$NODE" "$INSPECTOR" --cli "$@" 2>"$D/inspector.err")
		RC=$?
	}
	inspector "$U" --transport http --method tools/call --tool-name now --app-info
	is "$RC" 0 "inspector --app-info on a tool of an app exits 0"
	is "$(jq -c '[.hasApp, .resourceUri, .resourceMimeType, .csp.connectDomains[0], .prefersBorder, (.visibility|join("+"))]' <<<"$OUT" 2>/dev/null)" \
		"[true,\"$CLOCK\",\"$MIME\",\"https://api.example.com\",true,\"model+app\"]" \
		"inspector --app-info reports the uri, the MIME type, the csp, prefersBorder and the visibility"
	[ "$RC" = 0 ] || sed 's/^/#   /' "$D/inspector.err" | head -20
	inspector "$U" --transport http --method tools/call --tool-name plain --app-info
	is "$RC" 2 "inspector --app-info on a tool without an app exits 2"
	# server.app_meta: declared behind nginx: the Inspector's 2025-11-25
	# session sees the app only when it advertises the extension
	U1=$U PID1=$PH_PID
	if phantom_up "$D/declared.yaml" && nginx_start "$PH_ADDR"; then
		inspector "$NGINX_URL" --transport http --method tools/call --tool-name now --app-info
		is "$RC" 2 "declared: inspector --app-info without --advertise-apps finds no app (exit 2)"
		inspector "$NGINX_URL" --transport http --method tools/call --tool-name now --app-info --advertise-apps
		is "$RC/$(jq -r .resourceUri <<<"$OUT" 2>/dev/null)" "0/$CLOCK" \
			"declared: with --advertise-apps (the extension at initialize) it reports the app"
	else
		echo "not ok - the declared server starts"
	fi
	U=$U1 PH_PID=$PID1
else
	skip_n=5
	for _ in $(seq 1 $skip_n); do T_N=$((T_N + 1)); echo "ok $T_N # SKIP the Inspector is not installed"; done
fi
still_serving "$U" "the apps checks"

# ---- load-time errors (-t) -------------------------------------------------------------------
# bad NAME PATTERN YAML-APPS-AND-TOOLS: -t fails with a FILE:LINE: message matching PATTERN
bad() {
	local name=$1 pat=$2 out
	printf 'server: { name: bad }\n%s\n' "$3" >"$D/$name.yaml"
	out=$("$PHANTOM" -c "$D/$name.yaml" -t 2>&1)
	is "$?" 1 "-t fails: $name"
	like "$out" "$D/$name.yaml:[0-9]+: $pat" "-t: $name: the message names the file, the line and the key"
}
mkdir -p "$D/adir"
bad missing-file "apps\.v: file: cannot read '$D/nope\.html': No such file or directory" \
	"apps: { v: { file: nope.html } }"
bad unreadable-file "apps\.v: file: cannot read '$D/adir': Is a directory" \
	"apps: { v: { file: adir } }"
bad not-ui "apps\.v: uri: 'https://x\.example/v' is not a ui:// URI" \
	"apps: { v: { file: clock.html, uri: 'https://x.example/v' } }"
bad csp-path "apps\.v: csp\.connect: 'https://api\.example\.com/v1' is not an origin: an origin has no path" \
	"apps: { v: { file: clock.html, csp: { connect: [https://api.example.com/v1] } } }"
bad csp-quote "apps\.v: csp\.resource: ''self'' is not an origin" \
	"apps: { v: { file: clock.html, csp: { resource: [\"'self'\"] } } }"
bad csp-space "apps\.v: csp\.frame: 'https://a\.example https://b\.example' is not an origin: an origin holds no space" \
	"apps: { v: { file: clock.html, csp: { frame: ['https://a.example https://b.example'] } } }"
bad csp-semicolon "apps\.v: csp\.base_uri: 'https://a\.example;script-src \*' is not an origin: an origin holds no space, ';'" \
	"apps: { v: { file: clock.html, csp: { base_uri: ['https://a.example;script-src *'] } } }"
bad csp-port "apps\.v: csp\.connect: 'https://api\.example\.com:99999' is not an origin: a port is a number from 1 to 65535" \
	"apps: { v: { file: clock.html, csp: { connect: ['https://api.example.com:99999'] } } }"
bad csp-port-letter "apps\.v: csp\.connect: 'wss://api\.example\.com:8o' is not an origin: a port is a number" \
	"apps: { v: { file: clock.html, csp: { connect: ['wss://api.example.com:8o'] } } }"
bad csp-userinfo "apps\.v: csp\.connect: 'https://user:pw@api\.example\.com' is not an origin: an origin has no user name" \
	"apps: { v: { file: clock.html, csp: { connect: ['https://user:pw@api.example.com'] } } }"
bad csp-empty-label "apps\.v: csp\.resource: 'https://a\.\.b' is not an origin: a host has no empty label" \
	"apps: { v: { file: clock.html, csp: { resource: ['https://a..b'] } } }"
bad csp-percent "apps\.v: csp\.resource: 'https://a%0ab\.example' is not an origin: a host is labels of letters" \
	"apps: { v: { file: clock.html, csp: { resource: ['https://a%0ab.example'] } } }"
bad csp-idn "apps\.v: csp\.frame: 'https://b.*cher\.example' is not an origin: .*punycode A-label form \(xn--\.\.\.\)" \
	"apps: { v: { file: clock.html, csp: { frame: ['https://b"$'\xc3\xbc'"cher.example'] } } }"
# a value with CR LF is refused in one line, the characters written out
bad csp-crlf "apps\.v: csp\.connect: 'https://a\.example\\\\x0d\\\\x0aX: y' is not an origin: an origin holds no control character" \
	"apps: { v: { file: clock.html, csp: { connect: [\"https://a.example\\r\\nX: y\"] } } }"
is "$("$PHANTOM" -c "$D/csp-crlf.yaml" -t 2>&1 | wc -l)" 1 "-t: csp-crlf: one problem is one line"
bad visibility "tools\[0\] \(t\): visibility: expected one of model\|app" \
	"apps: { v: { file: clock.html } }
tools: [ { name: t, exec: [./now.sh], app: v, visibility: [model, user] } ]"
bad unknown-app "tool t: app: 'w' is not defined in apps" \
	"apps: { v: { file: clock.html } }
tools: [ { name: t, exec: [./now.sh], app: w } ]"
bad meta-clash "tool t: _meta: 'ui' is what app: v generates" \
	"apps: { v: { file: clock.html } }
tools: [ { name: t, exec: [./now.sh], app: v, _meta: { ui: { resourceUri: 'ui://x/y' } } } ]"
bad meta-clash-flat "tool t: _meta: 'ui/resourceUri' is what app: v generates" \
	"apps: { v: { file: clock.html } }
tools: [ { name: t, exec: [./now.sh], app: v, _meta: { 'ui/resourceUri': 'ui://x/y' } } ]"
printf '<!doctype html>\n<html><head>\n<link rel="stylesheet" href="style.css">\n</head></html>\n' >"$D/rel-link.html"
printf '<!doctype html><html><body>\n\n<SCRIPT type="module" src=//cdn.example.com/a.js></SCRIPT></body></html>\n' >"$D/rel-script.html"
bad relative-link "apps\.v: file: $D/rel-link\.html line 3: <link href=\"style\.css\"> is a relative reference" \
	"apps: { v: { file: rel-link.html } }"
bad relative-script "apps\.v: file: $D/rel-script\.html line 3: <script src=\"//cdn\.example\.com/a\.js\"> is a relative reference" \
	"apps: { v: { file: rel-script.html } }"
# a large view is a warning: -t passes and says so
head -c 1100000 /dev/zero | tr '\0' 'x' | { printf '<!doctype html><html><body><p>'; cat; printf '</p></body></html>\n'; } >"$D/big.html"
printf 'server: { name: big }\napps:\n  v: { file: big.html }\n' >"$D/big.yaml"
OUT=$("$PHANTOM" -c "$D/big.yaml" -t 2>&1)
is "$?" 0 "-t passes with a view over limits.app_bytes"
like "$OUT" "warning: $D/big.yaml:3: apps\.v: file: '$D/big\.html' is $(stat -c %s "$D/big.html") bytes, more than limits\.app_bytes \(1048576\)" \
	"-t warns about a view over 1 MiB, naming the file, line and key"
done_testing
