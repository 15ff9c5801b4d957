#!/bin/bash
# auth.mode oauth behind the real nginx with a jwks_file: RS256, PS256, ES256
# and EdDSA access tokens made at test time (openssl keys, tests/jwt_tool.py)
# are accepted; every hostile token of issue 28 gets 401 invalid_token with
# the resource_metadata challenge, each followed by a valid request that
# succeeds; required scopes and scope implications; the principal, assigns
# and scopes reach an exec handler but the token never does (nor the log);
# the RFC 9728 document built from the OAuth settings; a key added to the
# file is used once the file is replaced; -t checks the section.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
. "$top_srcdir/tests/oauth-lib.sh"
why=$(oauth_supported) || skip_all "$why"
JT="python3 $top_srcdir/tests/jwt_tool.py"
K=$T_DIR/keys
oauth_keygen "$K" rsa:rsa small:rsa1024 ec:ec ed:ed25519 new:rsa
openssl pkey -in "$K/rsa.pem" -pubout -out "$K/rsa.pub"
jwks() { oauth_jwks "$K" "$@"; } # jwks KEY:KID...: a JWK set of those keys
jwks rsa:r1 ec:e1 ed:d1 small:s1 >"$T_DIR/jwks.json"

cat >"$T_DIR/tool.sh" <<'SH'
#!/bin/bash
in=$(cat)
{ printf '%s\n' "$in"; env; } >>"${0%/*}/seen.txt"
jq -c '{content: [{type: "text", text: ({principal, assigns, scopes} | tojson)}]}' <<<"$in"
SH
chmod 755 "$T_DIR/tool.sh"
ISS=https://as.example.com/
RES=https://mcp.example.com/mcp
RM=https://mcp.example.com/.well-known/oauth-protected-resource/mcp
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: oauth-test, version: "1.0" }
workers: 2
auth:
  mode: oauth
  metadata:
    document: { resource: "$RES" }
  oauth:
    issuer: "$ISS"
    jwks_file: jwks.json
    max_token_bytes: 4096
    required_scopes: ["mcp:read"]
    scope_implies: { "mcp:admin": ["mcp:read", "mcp:write"], "mcp:all": ["mcp:admin", "offline_access"] }
    assigns_claims: [plan, org]
  allow:
    "scope:plan:basic": { tools: [whoami] }
    "scope:plan:pro": { tools: [whoami, wipe], prompts: [] }
    "scope:$(printf 'x%.0s' $(seq 1 250))": { tools: [whoami] }
tools:
  - { name: whoami, description: Who is calling, exec: [./tool.sh] }
  - { name: wipe, description: Needs more, exec: [./tool.sh], auth_scopes: ["mcp:write", "files:delete"] }
prompts:
  - { name: secret, messages: [ { role: user, text: hi } ], auth_scopes: ["prompts:read"] }
resources:
  - { uri: "docs://private", text: private, auth_scopes: ["docs:read"] }
resource_templates:
  - { uri_template: "bill://{account}", exec: [./tool.sh], auth_scopes: ["billing:read"] }
skills: { manifest: skills.yaml }
YAML
FIX=$(cd "$top_srcdir/tests/fixtures/skills" && pwd)
cat >"$T_DIR/skills.yaml" <<YAML
skills:
  - { path: acme/refunds, dir: "$FIX/refunds", auth_scopes: ["skills:billing"] }
  - { path: acme/refunds/partial-refunds, dir: "$FIX/refunds/partial-refunds", auth_scopes: ["skills:partial"] }
  - { path: git-workflow, dir: "$FIX/git-workflow" }
YAML
"$PHANTOM" -c "$T_DIR/phantom.yaml" -t >"$T_DIR/t.out" 2>&1
ok "-t accepts the configuration"
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
NOW=$(date +%s)
# claims [EXTRA-JSON-MEMBERS]: a good token's claims
claims() {
	printf '{"iss":"%s","aud":"%s","sub":"alice","exp":%d,"iat":%d,"scope":"mcp:read","plan":"pro"%s}' \
		"$ISS" "$RES" $((NOW + 600)) $((NOW - 5)) "${1:+,$1}"
}
sign() { $JT sign "$K/$1.pem" "$2" "$3" "$4"; } # sign KEY ALG HEADER CLAIMS
GOOD=$(sign rsa RS256 '{"kid":"r1"}' "$(claims)")
CHALLENGE="Bearer realm=\"phantom\", resource_metadata=\"$RM\", scope=\"mcp:read\""
INVALID="Bearer realm=\"phantom\", error=\"invalid_token\", resource_metadata=\"$RM\", scope=\"mcp:read\""
call() { mpost "$U" "$1" tools/call '{"name":"whoami","arguments":{}}' -H "Authorization: Bearer $2"; }

# ---- no token, good tokens of every algorithm
mpost "$U" 1 server/discover '{}'
is "$STATUS" 401 "no token: 401"
is "$(header WWW-Authenticate)" "$CHALLENGE" "no token: the challenge names resource_metadata and the required scope, no error"
for a in rsa:RS256:r1 rsa:PS256:r1 ec:ES256:e1 ed:EdDSA:d1; do
	IFS=: read -r key alg kid <<<"$a"
	t=$(sign "$key" "$alg" "{\"kid\":\"$kid\"}" "$(claims)")
	call 2 "$t"
	is "$STATUS" 200 "$alg token: 200"
	is "$(jqr '.result.content[0].text | fromjson | .principal')" alice "$alg token: the principal is sub"
done

# ---- every hostile token: 401 invalid_token, then a good request is served
hostile() { # hostile TOKEN WHAT
	call 3 "$1"
	is "$STATUS" 401 "$2: 401"
	is "$(header WWW-Authenticate)" "$INVALID" "$2: error=\"invalid_token\" with resource_metadata"
	is "$(jqr .error.message)" "Unauthorized: invalid token" "$2: message"
	call 4 "$GOOD"
	is "$STATUS" 200 "after $2: a good token is served"
}
hostile "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.$(printf '%s' "$(claims)" | base64 -w0 | tr '+/' '-_' | tr -d '=')." "alg none"
hostile "$($JT hs256 "$K/rsa.pub" '{"kid":"r1"}' "$(claims)")" "HS256 keyed with the RSA public key"
hostile "$(sign rsa RS256 '{"kid":"r1","crit":["exp"]}' "$(claims)")" "a crit header"
hostile "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ.YQ.Yg.Yw.ZA" "a JWE (five segments)"
hostile "$(sign rsa RS256 '{"kid":"r1","cty":"JWT"}' "$(claims)")" "a nested JWT (cty JWT)"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims "\"pad\":\"$(head -c 5000 /dev/zero | tr '\0' x)\"")")" \
	"a token over max_token_bytes"
hostile "${GOOD%%.*}x.${GOOD#*.}" "bad base64url"
hostile "${GOOD}AAAA" "trailing garbage"
# the b64token syntax is checked on a token not remembered, here a
# remembered one with a byte more
hostile "${GOOD}!" "a byte outside RFC 6750's b64token after a remembered token"
hostile "${GOOD%%.*}~!.${GOOD#*.}" "a byte outside RFC 6750's b64token"
is "$(grep -c 'invalid OAuth token: the token is not an RFC 6750 b64token' "$PH_LOG")" 2 \
	"the log says why, for each of the two"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims "\"exp\":$((NOW - 3600))")")" "an expired token"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims "\"nbf\":$((NOW + 3600))")")" "nbf in the future"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "{\"iss\":\"$ISS\",\"aud\":\"$RES\",\"sub\":\"alice\",\"scope\":\"mcp:read\"}")" "no exp"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims '"iss":"https://evil.example.com/"')")" "a wrong iss"
grep -qF "invalid OAuth token: the token's iss \"https://evil.example.com/\" is not auth.oauth.issuer \"$ISS\"" "$PH_LOG"
ok "the log names the token's iss and the configured issuer"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims "\"iss\":\"${ISS%/}\"")")" "an iss without the issuer's trailing '/'"
grep -qF "the token's iss \"${ISS%/}\" is not auth.oauth.issuer \"$ISS\" (only a trailing '/' differs" "$PH_LOG"
ok "the log names both and says only a trailing '/' differs"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims "\"iss\":\"https://$(head -c 400 /dev/zero | tr '\0' x).example/\"")")" "a 400-byte iss"
like "$(grep -o "the token's iss \"https://x*" "$PH_LOG" | tail -1)" "^the token's iss \"https://x{192}$" \
	"the log keeps 200 bytes of it"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "{\"iss\":\"$ISS\",\"sub\":\"alice\",\"exp\":$((NOW + 600)),\"scope\":\"mcp:read\"}")" "no aud"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims '"aud":"https://other.example.com/mcp"')")" "a foreign aud"
hostile "$(sign rsa RS256 '{"kid":"unknown"}' "$(claims)")" "an unknown kid"
hostile "$(sign ec ES256 '{"kid":"r1"}' "$(claims)")" "a key whose type does not match the alg"
hostile "$(sign small RS256 '{"kid":"s1"}' "$(claims)")" "an RSA 1024 key"
JKU_PORT=$(free_port)
hostile "$(sign new RS256 "{\"kid\":\"r1\",\"jku\":\"http://127.0.0.1:$JKU_PORT/k\",\"x5u\":\"http://127.0.0.1:$JKU_PORT/c\",\"jwk\":$($JT jwk "$K/new.pem" r1)}" "$(claims)")" \
	"jku/x5u/jwk headers (ignored, never fetched)"
hostile "not-a-jwt-at-all" "an opaque token without introspection"
# U+0000 or a control character in a compared claim: refused, never cut
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims '"sub":"alice\u0000-attacker"')")" "a sub of alice, a NUL and more"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims '"sub":"alice\nmethod=forged"')")" "a sub holding a line feed"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims "\"iss\":\"$ISS\\u0000x\"")")" "an iss with a NUL after the issuer"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims "\"aud\":\"$RES\\u0000x\"")")" "an aud with a NUL after the resource"
hostile "$(sign rsa RS256 '{"kid":"r1\u0000x"}' "$(claims)")" "a kid with a NUL after a known kid"
hostile "$(sign rsa RS256 '{"kid":"r1"}' "$(claims '"sub":"mallory","sub\u0000":"alice"')")" "a member name cut at a NUL"
is "$(grep -c "invalid OAuth token: the token's principal claim is not a string of 1 to 4096 bytes without control characters" "$PH_LOG")" 2 \
	"the log says why the two subs were refused"
ES=$(sign ec ES256 '{"kid":"e1"}' "$(claims)")
for n in 1 3 62; do
	hostile "${ES%.*}.$(head -c "$n" /dev/zero | tr '\0' Z | base64 -w0 | tr '+/' '-_' | tr -d '=')" \
		"an ES256 token with a $n-byte signature"
done
grep -q "invalid OAuth token: the token's aud is not this server" "$PH_LOG"
ok "the log says why a token was refused"
! grep -qF "$GOOD" "$PH_LOG" && ! grep -qF "${GOOD#*.}" "$PH_LOG"
ok "the token never appears in the log"

# ---- scopes
call 5 "$(sign rsa RS256 '{"kid":"r1"}' "$(claims '"scope":"other"')")"
is "$STATUS" 403 "a token without the required scope: 403"
is "$(header WWW-Authenticate)" "Bearer realm=\"phantom\", error=\"insufficient_scope\", resource_metadata=\"$RM\", scope=\"mcp:read\"" \
	"403: insufficient_scope naming the required scope"
call 6 "$(sign ec ES256 '{"kid":"e1"}' "$(claims '"scope":null,"scp":["mcp:admin"]')")"
is "$STATUS" 200 "scp as an array, mcp:admin implying mcp:read: 200"
is "$(jqr '.result.content[0].text | fromjson | .scopes | join(" ")')" "mcp:admin mcp:read mcp:write" \
	"the handler gets the granted scopes with the implied ones"
call 7 "$(sign ec ES256 '{"kid":"e1","typ":"JWT"}' "$(claims '"scope":null,"scp":"mcp:read extra","org":{"id":7}')")"
is "$STATUS" 200 "scp as a space-separated string, typ JWT: 200"
is "$(jqr '.result.content[0].text | fromjson | .assigns | tojson')" '{"plan":"pro","org":{"id":7}}' \
	"assigns_claims are the handler's assigns"
! grep -qF "${GOOD#*.}" "$T_DIR/seen.txt" && ! grep -qi "authorization" "$T_DIR/seen.txt"
ok "the exec handler's stdin and environment never hold the token"

# ---- auth_scopes: 403 naming every scope the operation needs; the item stays listed
CH_SCOPE() { printf 'Bearer realm="phantom", error="insufficient_scope", resource_metadata="%s", scope="%s"' "$RM" "$1"; }
mpost "$U" 11 tools/call '{"name":"wipe","arguments":{}}' -H "Authorization: Bearer $GOOD"
is "$STATUS" 403 "a tool whose auth_scopes the token lacks: 403"
is "$(header WWW-Authenticate)" "$(CH_SCOPE "mcp:read mcp:write files:delete")" \
	"the challenge names the required scope and the tool's"
like "$(grep 'method=tools/call' "$PH_LOG" | grep 'status=403' | tail -1)" 'target=wipe ' \
	"the request log names the tool refused"
ADMIN=$(sign ed EdDSA '{"kid":"d1"}' "$(claims '"scope":"mcp:admin"')")
mpost "$U" 12 tools/call '{"name":"wipe","arguments":{}}' -H "Authorization: Bearer $ADMIN"
is "$STATUS" 403 "mcp:admin implies mcp:write but not files:delete: still 403"
is "$(header WWW-Authenticate)" "$(CH_SCOPE "mcp:read mcp:write files:delete")" "... with every scope in one challenge"
STEP=$(sign ed EdDSA '{"kid":"d1"}' "$(claims '"scope":"mcp:admin files:delete"')")
mpost "$U" 13 tools/call '{"name":"wipe","arguments":{}}' -H "Authorization: Bearer $STEP"
is "$STATUS" 200 "after the step-up (files:delete granted): the call succeeds"
mpost "$U" 14 tools/list '{}' -H "Authorization: Bearer $GOOD"
is "$(jqr '[.result.tools[].name] | join(",")')" "whoami,wipe" "tools/list still lists the tool the token cannot call"
mpost "$U" 15 prompts/get '{"name":"secret"}' -H "Authorization: Bearer $GOOD"
is "$STATUS:$(header WWW-Authenticate)" "403:$(CH_SCOPE "mcp:read prompts:read")" "a prompt's auth_scopes: 403"
mpost "$U" 16 resources/read '{"uri":"docs://private"}' -H "Authorization: Bearer $GOOD"
is "$STATUS:$(header WWW-Authenticate)" "403:$(CH_SCOPE "mcp:read docs:read")" "a resource's auth_scopes: 403"
mpost "$U" 17 resources/read '{"uri":"bill://acme"}' -H "Authorization: Bearer $GOOD"
is "$STATUS:$(header WWW-Authenticate)" "403:$(CH_SCOPE "mcp:read billing:read")" "a resource template's auth_scopes: 403"
mpost "$U" 17 skills/get '{"uri":"skill://acme/refunds/SKILL.md"}' -H "Authorization: Bearer $GOOD"
is "$STATUS:$(header WWW-Authenticate)" "403:$(CH_SCOPE "mcp:read skills:billing")" "a skill's auth_scopes: skills/get is 403"
mpost "$U" 17 resources/read '{"uri":"skill://acme/refunds/partial-refunds/SKILL.md"}' -H "Authorization: Bearer $GOOD"
is "$STATUS:$(header WWW-Authenticate)" "403:$(CH_SCOPE "mcp:read skills:partial skills:billing")" \
	"a nested skill needs its scopes and those of the skill it is nested in"
mpost "$U" 17 resources/read '{"uri":"skill://git-workflow/SKILL.md"}' -H "Authorization: Bearer $GOOD"
is "$STATUS" 200 "a skill without auth_scopes is read"
BILLING=$(sign ec ES256 '{"kid":"e1"}' "$(claims '"scope":"mcp:read skills:billing"')")
mpost "$U" 17 skills/get '{"uri":"skill://acme/refunds/SKILL.md"}' -H "Authorization: Bearer $BILLING"
is "$STATUS:$(jqr .result.skill.uri)" "200:skill://acme/refunds/SKILL.md" "with skills:billing the skill is served"
mpost "$U" 17 resources/read '{"uri":"skill://acme/refunds/partial-refunds/SKILL.md"}' -H "Authorization: Bearer $BILLING"
is "$STATUS" 403 "... but not its nested skill without skills:partial"
mpost "$U" 17 skills/list '{}' -H "Authorization: Bearer $GOOD"
is "$(jqr '[.result.skills[].uri] | sort | join(" ")')" \
	"skill://acme/refunds/SKILL.md skill://acme/refunds/partial-refunds/SKILL.md skill://git-workflow/SKILL.md" \
	"skills/list still lists the skills the token cannot read"
mpost "$U" 18 resources/read '{"uri":"docs://private"}' \
	-H "Authorization: Bearer $(sign ec ES256 '{"kid":"e1"}' "$(claims '"scope":"mcp:read docs:read"')")"
is "$STATUS:$(jqr '.result.contents[0].text')" "200:private" "with docs:read the resource is read"
mpost "$U" 19 tools/call '{"name":"nope","arguments":{}}' -H "Authorization: Bearer $GOOD"
is "$STATUS:$(jqr .error.code)" "200:-32602" "an unknown tool is still unknown, not 403"

# ---- allow-lists granted by scopes (auth.allow "scope:NAME")
BASIC=$(sign ec ES256 '{"kid":"e1"}' "$(claims '"scope":"mcp:read plan:basic"')")
mpost "$U" 20 tools/list '{}' -H "Authorization: Bearer $BASIC"
is "$(jqr '[.result.tools[].name] | join(",")')" "whoami" "scope plan:basic: its allow entry narrows tools/list"
is "$(jqr .result.cacheScope)" private "allow-lists configured: cacheScope private"
mpost "$U" 21 tools/call '{"name":"wipe","arguments":{}}' -H "Authorization: Bearer $BASIC"
is "$STATUS:$(jqr .error.message)" "200:Unknown tool: wipe" "plan:basic: a tool it does not grant is unknown (not 403)"
BOTH=$(sign ec ES256 '{"kid":"e1"}' "$(claims '"scope":"mcp:read plan:basic plan:pro"')")
mpost "$U" 22 tools/list '{}' -H "Authorization: Bearer $BOTH"
is "$(jqr '[.result.tools[].name] | join(",")')" "whoami,wipe" "plan:basic and plan:pro: the union of their lists"
mpost "$U" 23 prompts/list '{}' -H "Authorization: Bearer $BOTH"
is "$(jqr '[.result.prompts[].name] | join(",")')" "secret" "a kind one of the scopes leaves unlisted is not restricted"
mpost "$U" 24 prompts/list '{}' -H "Authorization: Bearer $(sign ec ES256 '{"kid":"e1"}' "$(claims '"scope":"mcp:read plan:pro"')")"
is "$(jqr '.result.prompts | length')" 0 "plan:pro alone: its empty prompts list hides every prompt"
# a 256-byte scope does not fit "scope:" and 250 bytes: it is no entry's,
# not the entry of its first 250 bytes (before, cut to fit, it was)
LONG=$(printf 'x%.0s' $(seq 1 256))
mpost "$U" 25 tools/list '{}' -H "Authorization: Bearer $(sign ec ES256 '{"kid":"e1"}' "$(claims "\"scope\":\"mcp:read $LONG\"")")"
is "$(jqr '[.result.tools[].name] | join(",")')" "whoami,wipe" "a scope longer than an allow key holds is not cut to match one"

# ---- the RFC 9728 document from the OAuth settings
prm() { printf '' | env -i GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=GET REQUEST_URI=/.well-known/oauth-protected-resource/mcp \
	SERVER_PROTOCOL=HTTP/1.1 HTTP_HOST=localhost "$PHANTOM" -c "$1" 2>/dev/null | tr -d '\r' | sed '1,/^$/d'; }
out=$(prm "$T_DIR/phantom.yaml")
SUPPORTED='"mcp:read","mcp:admin","mcp:write","mcp:all","plan:basic","plan:pro","'$(printf 'x%.0s' $(seq 1 250))'","files:delete","prompts:read","docs:read","billing:read","skills:billing","skills:partial"'
is "$(jq -c . <<<"$out")" "{\"resource\":\"$RES\",\"authorization_servers\":[\"$ISS\"],\"scopes_supported\":[$SUPPORTED],\"bearer_methods_supported\":[\"header\"]}" \
	"the metadata document at the path derived from the resource, filled from auth.oauth"
# (scopes_supported: required_scopes, scope_implies, the scope: allow-lists and
# every item's auth_scopes; offline_access, implied by mcp:all, is left out)
sed 's|document: { resource: "\([^"]*\)" }|document: { resource: "\1", scopes_supported: ["mcp:read"] }|' \
	"$T_DIR/phantom.yaml" >"$T_DIR/own-scopes.yaml"
is "$(prm "$T_DIR/own-scopes.yaml" | jq -c .scopes_supported)" '["mcp:read"]' \
	"scopes_supported written in the document is kept as it is"

# ---- Amazon Cognito: no aud, the app client in client_id (client_id_audience)
sed -e 's|^    max_token_bytes: 4096$|    max_token_bytes: 4096\n    client_id_audience: true\n    audiences: ["app-client-1"]|' \
	"$T_DIR/phantom.yaml" >"$T_DIR/cognito.yaml"
cognito() { # cognito CLIENT_ID TOKEN_USE [AUD-MEMBER]: tools/call whoami through CGI with such a token
	local t; t=$(sign rsa RS256 '{"kid":"r1"}' "$(printf '{"iss":"%s","sub":"carol","exp":%d,"scope":"mcp:read","client_id":"%s","token_use":"%s"%s}' \
		"$ISS" $((NOW + 600)) "$1" "$2" "${3:+,$3}")")
	CGI_ARGS="-c $T_DIR/cognito.yaml" cgi_post "$(req 30 tools/call '{"name":"whoami","arguments":{}}')" \
		"HTTP_AUTHORIZATION=Bearer $t" "HTTP_MCP_PROTOCOL_VERSION=$MODERN" HTTP_MCP_METHOD=tools/call HTTP_MCP_NAME=whoami
}
cognito app-client-1 access
is "$STATUS:$(jqr '.result.content[0].text | fromjson | .principal')" 200:carol \
	"client_id_audience: a token without aud whose client_id is an audience is accepted (Cognito)"
cognito app-client-2 access
is "$STATUS" 401 "... another client_id is not"
cognito app-client-1 id '"aud":"app-client-1"'
is "$STATUS" 401 "... nor an ID token (token_use id), though its aud is the client"
CGI_ARGS="-c $T_DIR/phantom.yaml" cgi_post "$(req 31 tools/call '{"name":"whoami","arguments":{}}')" \
	"HTTP_AUTHORIZATION=Bearer $(sign rsa RS256 '{"kid":"r1"}' "{\"iss\":\"$ISS\",\"sub\":\"carol\",\"exp\":$((NOW + 600)),\"scope\":\"mcp:read\",\"client_id\":\"$RES\"}")" \
	"HTTP_MCP_PROTOCOL_VERSION=$MODERN" HTTP_MCP_METHOD=tools/call HTTP_MCP_NAME=whoami
is "$STATUS" 401 "without client_id_audience, client_id never stands for a missing aud"

# ---- key rotation through the file: a new key is used once the file changes
NEWT=$(sign new RS256 '{"kid":"r2"}' "$(claims)")
call 8 "$NEWT"
is "$STATUS" 401 "a token of a key not yet published: 401"
jwks rsa:r1 new:r2 >"$T_DIR/jwks.json.new" && mv "$T_DIR/jwks.json.new" "$T_DIR/jwks.json"
call 9 "$NEWT"
is "$STATUS" 200 "the file replaced: the unknown kid makes the worker read it again at once"
call 10 "$GOOD"
is "$STATUS" 200 "the old key still in the set: its tokens still work"

# ---- -t checks the whole section
bad_conf() { # bad_conf WHAT EXPECTED-REGEX YAML-OF-AUTH.OAUTH
	printf 'auth:\n  mode: oauth\n  metadata: { document: { resource: "%s" } }\n  oauth:\n%s\n' "$RES" "$3" >"$T_DIR/bad.yaml"
	cp "$T_DIR/jwks.json" "$T_DIR/bad-jwks.json"
	! "$PHANTOM" -c "$T_DIR/bad.yaml" -t >"$T_DIR/bad.out" 2>&1
	ok "-t refuses $1"
	like "$(cat "$T_DIR/bad.out")" "$2" "-t names the problem of $1"
}
bad_conf "a missing issuer" "bad.yaml:4: auth.mode oauth: auth.oauth.issuer is required" "    jwks_file: bad-jwks.json"
bad_conf "alg none" "bad.yaml:7: auth.oauth.algorithms\\[0\\]: 'none' is not one of" \
	"    issuer: $ISS
    jwks_file: bad-jwks.json
    algorithms: [none]"
bad_conf "an http issuer" "bad.yaml:5: auth.oauth.issuer: an https URL" "    issuer: http://as.example.com/
    jwks_file: bad-jwks.json"
bad_conf "an unknown key" "bad.yaml:6: unknown key 'auth.oauth.jwks'" "    issuer: $ISS
    jwks: x"
bad_conf "a jwks_file that is not a JWK set" "bad.yaml:6: auth.oauth.jwks_file: .*not a JWK set" "    issuer: $ISS
    jwks_file: t.out"
bad_conf "a clock skew out of range" "bad.yaml:7: auth.oauth.clock_skew_s" "    issuer: $ISS
    jwks_file: bad-jwks.json
    clock_skew_s: 9999"
bad_conf "introspection without credentials" "auth.oauth.introspection: client_id and secret_file are required" "    issuer: $ISS
    jwks_file: bad-jwks.json
    introspection: { endpoint: https://as.example.com/introspect }"
printf 'tools:\n  - { name: t, exec: [./tool.sh], auth_scopes: [offline_access] }\n' >"$T_DIR/bad.yaml"
! "$PHANTOM" -c "$T_DIR/bad.yaml" -t >"$T_DIR/bad.out" 2>&1
like "$(cat "$T_DIR/bad.out")" "bad.yaml:2: .*auth_scopes\\[0\\]: offline_access asks for refresh tokens" \
	"-t refuses offline_access in auth_scopes"
printf 'tools:\n  - { name: t, exec: [./tool.sh], auth_scopes: [a] }\n' >"$T_DIR/bad.yaml"
! "$PHANTOM" -c "$T_DIR/bad.yaml" -t >"$T_DIR/bad.out" 2>&1
like "$(cat "$T_DIR/bad.out")" "tool t: auth_scopes are checked only with auth.mode oauth" \
	"-t refuses auth_scopes without auth.mode oauth (they would do nothing)"
printf 'skills: { manifest: skills-bad.yaml }\n' >"$T_DIR/bad.yaml"
printf 'skills:\n  - { path: git-workflow, dir: "%s/git-workflow", auth_scopes: ["a b"] }\n' "$FIX" >"$T_DIR/skills-bad.yaml"
"$PHANTOM" -c "$T_DIR/bad.yaml" -t >"$T_DIR/bad.out" 2>&1
like "$(cat "$T_DIR/bad.out")" "skills-bad.yaml:2: .*auth_scopes\\[0\\]: 'a b' is not a scope" \
	"-t checks a skill's auth_scopes in the manifest"
printf 'auth:\n  mode: bearer\n  tokens: [{principal: a, sha256: %s}]\n  oauth: { issuer: %s }\n' "$(printf x | sha256sum | cut -c1-64)" "$ISS" >"$T_DIR/bad.yaml"
! "$PHANTOM" -c "$T_DIR/bad.yaml" -t >"$T_DIR/bad.out" 2>&1
like "$(cat "$T_DIR/bad.out")" "auth.oauth is used only with auth.mode oauth" "-t refuses auth.oauth in another mode"
done_testing
