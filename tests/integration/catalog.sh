#!/bin/bash
# resources/list from the application (resource_lists:), behind nginx and on
# stdio: configured resources and skills first, then the handler's pages
# behind Phantom's own sealed cursor. A 1,000-study catalogue read back by
# the SDK v2 client with no duplicate and no gap; tampered, foreign and
# other-principal cursors refused with -32602; bad entries skipped and
# logged; entries past the limit served on the next page; a handler that
# fails, times out or writes junk answered -32603, the server serving on.
# A reload between two pages of configured resources or tools skips none.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"

bearer_token T_A H_A; bearer_token T_B H_B; bearer_token T_C H_C
CATALOG_SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
export CATALOG_SECRET
H=$top_srcdir/tests/handlers/catalog.sh

# conf FILE MODE [YAML...]: a server with one configured resource and the
# catalogue handler in MODE
conf() {
	local f=$1 mode=$2; shift 2
	test_conf "$f" catalog-test 'workers: 2' 'request_state: { secret_env: CATALOG_SECRET }' \
		'resources: [ { uri: "docs://readme", name: readme, text: "read me" } ]' \
		'resource_lists:' \
		"  - { name: studies, exec: [ \"$H\", $mode ], timeout_ms: 2000 }" "$@"
}
conf "$T_DIR/phantom.yaml" ok \
	'auth:' '  mode: bearer' \
	"  tokens: [ { principal: alice, sha256: $H_A }, { principal: bob, sha256: $H_B }," \
	"            { principal: carol, sha256: $H_C } ]" \
	'  allow:' \
	'    carol: { resources: ["docs://readme", "study://7", "study://993"] }'
"$PHANTOM" -c "$T_DIR/phantom.yaml" -t >"$T_DIR/t.out" 2>&1; ok "the configuration with resource_lists loads (-t)"
sed 's/^/#   /' "$T_DIR/t.out"
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL
A=(-H "Authorization: Bearer $T_A") B=(-H "Authorization: Bearer $T_B") C=(-H "Authorization: Bearer $T_C")

# list WHO [CURSOR]: one page as alice, bob or carol
list() {
	local who=$1 p='{}'
	[ $# -gt 1 ] && p=$(jq -nc --arg c "$2" '{cursor: $c}')
	case $who in alice) mpost "$U" 1 resources/list "$p" "${A[@]}" ;; bob) mpost "$U" 1 resources/list "$p" "${B[@]}" ;;
	carol) mpost "$U" 1 resources/list "$p" "${C[@]}" ;; esac
}
# all WHO: follows nextCursor to the end; sets URIS (one per line) and PAGES
all() {
	local c= first=1
	URIS= PAGES=0
	while [ -n "$first" ] || [ -n "$c" ]; do
		if [ -n "$first" ]; then list "$1"; else list "$1" "$c"; fi
		first=
		[ "$STATUS" = 200 ] || { URIS="$URIS"$'\n'"ERROR $BODY"; return; }
		URIS="$URIS"$'\n'"$(jqr '.result.resources[].uri')"
		PAGES=$((PAGES + 1))
		c=$(jqr '.result.nextCursor // empty')
		[ "$PAGES" -gt 100 ] && return
	done
	URIS=$(printf '%s\n' "$URIS" | sed '/^$/d')
}

list alice
is "$STATUS/$(jqr '.result.resources[0].uri')" 200/docs://readme "page 1: the configured resource first"
is "$(jqr '.result.resources | length')" 1 "page 1 holds the configured part only"
c1=$(jqr .result.nextCursor)
[ -n "$c1" ] && [ "$c1" != null ]; ok "page 1 has a nextCursor into the handler's pages"
list alice "$c1"
is "$STATUS/$(jqr '.result.resources | length')" 200/100 "page 2: the handler's first 100 entries (server.page_size)"
is "$(jqr '.result.resources[0] | [.uri, .name, .mimeType, .size] | @json')" \
	'["study://0","study-0","application/json",100]' "a handler's entry as it gave it"
is "$(jqr '.result.ttlMs|type')/$(jqr .result.cacheScope)" number/private "cache hints on a handler's page (auth: private)"
c2=$(jqr .result.nextCursor)
like "$c2" '^[A-Za-z0-9_-]{40,}$' "Phantom's cursor is opaque (sealed), not the handler's '100'"
[ "$c2" != 100 ]; ok "the handler's own cursor is not what the client sees"

all alice
is "$(printf '%s\n' "$URIS" | grep -c '^study://')" 1000 "alice: all 1000 studies through the pages"
is "$(printf '%s\n' "$URIS" | sort | uniq -d | head -1)" "" "alice: no study listed twice"
is "$(printf '%s\n' "$URIS" | grep '^study://' | sed 's#study://##' | sort -n | awk '$1 != NR-1 {print; exit}')" "" \
	"alice: no gap, 0 to 999"
is "$PAGES" 11 "alice: 1 configured page + 10 handler pages"
all bob
is "$(printf '%s\n' "$URIS" | grep -c '^study://')" 500 "bob: the handler got his principal (500 even studies)"
all carol
is "$(printf '%s\n' "$URIS" | tr '\n' ' ')" "docs://readme study://7 study://993 " \
	"carol: allow-lists apply to the handler's entries"

# cursors
bad=${c2%?}; case ${c2: -1} in A) bad="${bad}B" ;; *) bad="${bad}A" ;; esac
list alice "$bad"
is "$STATUS/$(jqr .error.code)/$(jqr .error.message)" "200/-32602/Invalid cursor" "a tampered cursor: -32602 Invalid cursor"
list alice "${c2:0:20}"
is "$(jqr .error.code)" -32602 "a truncated cursor: -32602"
list alice "$(printf 'p1:100' | base64 | tr '+/' '-_' | tr -d '=')"
is "$(jqr .error.code)" -32602 "a made-up offset cursor past the end: -32602"
list bob "$c2"
is "$(jqr .error.code)" -32602 "alice's cursor used by bob: -32602"
list alice "$c2"
is "$STATUS/$(jqr '.result.resources[0].uri')" 200/study://100 "alice's cursor still works for alice"

# the SDK v2 client reads the whole catalogue (no auth here: a second server)
conf "$T_DIR/sdk.yaml" ok
phantom_unix "$T_DIR/sdk.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok - nginx starts"; exit 1; }
if node_setup; then
	node_client sdk-catalog.mjs --url "$NGINX_URL" --expect 1000 --first docs://readme
	# the same over stdio
	node_client sdk-catalog.mjs --stdio "$PHANTOM" --arg -c --arg "$T_DIR/sdk.yaml" --arg --stdio \
		--expect 1000 --first docs://readme
else
	echo "ok $((T_N += 1)) - SDK v2 client # SKIP npm packages not installed"
fi

# a persistent exec handler (one process per worker holding the catalogue)
test_conf "$T_DIR/persist.yaml" catalog-test 'workers: 2' 'request_state: { secret_env: CATALOG_SECRET }' \
	'resources: [ { uri: "docs://readme", name: readme, text: "read me" } ]' \
	'resource_lists:' \
	"  - { name: studies, exec: [ \"$top_srcdir/tests/handlers/catalog.py\", \"1000\" ], persistent: true, timeout_ms: 5000 }"
if command -v python3 >/dev/null && phantom_unix "$T_DIR/persist.yaml" && nginx_start "$PH_BACKEND"; then
	if node_setup; then
		node_client sdk-catalog.mjs --url "$NGINX_URL" --expect 1000 --first docs://readme
	fi
	U=$NGINX_URL A=() # this server has no auth
	all alice
	is "$(printf '%s\n' "$URIS" | grep '^study://' | sort -u | wc -l)/$PAGES" 1000/11 \
		"a persistent exec resource list: 1000 studies in 10 pages after the configured one"
	fresh=$(grep -c 'method=resources/list .*exec=fresh' "$PH_LOG")
	warm=$(grep -c 'method=resources/list .*exec=warm' "$PH_LOG")
	[ "$fresh" -ge 1 ] && [ "$fresh" -le 2 ] && [ "$warm" -ge 8 ]
	ok "... a process per worker started once (exec=fresh $fresh times) and served every other page (exec=warm $warm times)"
else
	echo "ok $((T_N += 1)) - persistent exec resource list # SKIP python3, phantom or nginx missing"
fi

# what the handler gets, and failing handlers (stdio: one process each)
CATALOG_LOG=$T_DIR/catalog.in
conf "$T_DIR/record.yaml" "record, 1000, \"$CATALOG_LOG\""
printf '%s\n' "$(req 1 resources/list)" >"$T_DIR/in"
out=$("$PHANTOM" -c "$T_DIR/record.yaml" --stdio <"$T_DIR/in" 2>"$T_DIR/record.err")
c=$(jq -r .result.nextCursor <<<"$out")
{ req 2 resources/list "$(jq -nc --arg c "$c" '{cursor: $c}')"; echo; } |
	"$PHANTOM" -c "$T_DIR/record.yaml" --stdio >/dev/null 2>>"$T_DIR/record.err"
is "$(jq -c '{kind, cursor, limit, principal, assigns}' "$CATALOG_LOG")" \
	'{"kind":"resource_list","cursor":null,"limit":100,"principal":null,"assigns":{}}' \
	"the handler gets {kind, cursor, limit, principal, assigns} on stdin"

# stdio_page MODE: the page after the configured one, from a handler in MODE; sets OUT, ERR
# (the page comes from a process of its own: the answers are found by id)
stdio_page() {
	conf "$T_DIR/$1.yaml" "$1"
	OUT=$({ req 1 resources/list; echo; } | "$PHANTOM" -c "$T_DIR/$1.yaml" --stdio 2>"$T_DIR/$1.err")
	c=$(jq -r .result.nextCursor <<<"$OUT")
	OUT=$({ req 2 resources/list "$(jq -nc --arg c "$c" '{cursor: $c}')"; echo; req 3 tools/list; echo
		echo '{"jsonrpc":"2.0","id":4,"method":"ping"}'; } |
		"$PHANTOM" -c "$T_DIR/$1.yaml" --stdio 2>"$T_DIR/$1.err")
	ERR=$(cat "$T_DIR/$1.err")
}
stdio_page junk
is "$(jq 'select(.id == 2)' <<<"$OUT" | jq -c '[.result.resources[].uri]')" '["study://good-1","study://good-2"]' \
	"junk entries are skipped, the good ones kept"
is "$(jq 'select(.id == 2)' <<<"$OUT" | jq -c '.result.resources[1] | keys')" '["name","uri"]' \
	"only a Resource's members pass (an unknown member is dropped)"
is "$(grep -c 'resource list studies: entry [0-9]* skipped' <<<"$ERR")" 7 "each bad entry is logged"
is "$(jq -r 'select(.id == 4) | .result | tojson' <<<"$OUT")" "{}" "stdio: served on after the junk"
for m in fail slow garbage; do
	t0=$SECONDS
	stdio_page $m
	is "$(jq 'select(.id == 2)' <<<"$OUT" | jq -r '.error.code')" -32603 "a handler that ${m}s: -32603"
	like "$(jq 'select(.id == 2)' <<<"$OUT" | jq -r '.error.message')" "resource list 'studies' failed" "  the error names the list"
	is "$(jq -r 'select(.id == 4) | .result | tojson' <<<"$OUT")" "{}" "  the next request is served"
done
[ $((SECONDS - t0)) -lt 20 ]; ok "the slow handler was stopped by its timeout_ms"

# stdio: a tampered cursor
conf "$T_DIR/tamper.yaml" ok
OUT=$({ req 1 resources/list; echo; } | "$PHANTOM" -c "$T_DIR/tamper.yaml" --stdio 2>/dev/null)
c=$(jq -r .result.nextCursor <<<"$OUT")
bad=${c:0:10}$( [ "${c:10:1}" = A ] && echo B || echo A)${c:11}
OUT=$({ req 2 resources/list "$(jq -nc --arg c "$bad" '{cursor: $c}')"; echo
	req 3 resources/list "$(jq -nc --arg c "$c" '{cursor: $c}')"; echo; } |
	"$PHANTOM" -c "$T_DIR/tamper.yaml" --stdio 2>/dev/null)
is "$(sed -n 1p <<<"$OUT" | jq -c '[.error.code, .error.message]')" '[-32602,"Invalid cursor"]' \
	"stdio: a tampered cursor is -32602 Invalid cursor"
is "$(sed -n 2p <<<"$OUT" | jq -r '.result.resources[0].uri')" study://0 "stdio: the untouched cursor is served next"

# through nginx: a handler that fails, writes junk or is too slow
for m in fail garbage slow; do
	conf "$T_DIR/ng-$m.yaml" "$m"
	sed -i 's/timeout_ms: 2000/timeout_ms: 500/' "$T_DIR/ng-$m.yaml"
	phantom_unix "$T_DIR/ng-$m.yaml" && nginx_start "$PH_BACKEND" || { echo "not ok - phantom and nginx start"; exit 1; }
	U=$NGINX_URL A=()
	list alice
	c=$(jqr .result.nextCursor)
	list alice "$c"
	case $m in fail) what="exits 3" ;; garbage) what="writes what is not JSON" ;; slow) what="outlives timeout_ms" ;; esac
	is "$STATUS/$(jqr .error.code)" 200/-32603 "nginx: a handler that $what: -32603"
	list alice
	is "$STATUS/$(jqr '.result.resources[0].uri')" 200/docs://readme "  the next request is served"
done

# a module handler (tests/modules/testmod.c: catalog), CATALOG_SIZE studies
test_conf "$T_DIR/module.yaml" catalog-test 'request_state: { secret_env: CATALOG_SECRET }' \
	'resource_lists: [ { name: mod, module: testmod.so, symbol: catalog } ]'
n=0 params='{}'
for _ in $(seq 1 5); do
	OUT=$(CATALOG_SIZE=250 "$PHANTOM" -c "$T_DIR/module.yaml" --stdio 2>"$T_DIR/module.err" <<<"$(req 1 resources/list "$params")")
	n=$((n + $(jq '.result.resources | length' <<<"$OUT")))
	c=$(jq -r '.result.nextCursor // empty' <<<"$OUT")
	[ -z "$c" ] && break
	params=$(jq -nc --arg c "$c" '{cursor: $c}')
done
is "$n/$c" 250/ "a module resource list: 250 entries in 3 pages, then no nextCursor"
is "$(jq -r '.result.resources[0].uri' <<<"$OUT")" study://200 "  the module got its own cursor back"
grep -q 'resource list studies' "$T_DIR/slow.err"; ok "the timeout is logged"

# ---- a handler that gives more entries than the limit: none is lost
# over SIZE STEP PAGE_SIZE: a server whose handler pages SIZE studies STEP at a time
over() {
	printf '%s\n' "server: { name: over, version: \"1.0\", page_size: $3 }" 'workers: 2' \
		'request_state: { secret_env: CATALOG_SECRET }' 'resource_lists:' \
		"  - { name: studies, exec: [ \"$H\", over, \"$1\", \"$2\" ], timeout_ms: 5000 }" >"$T_DIR/over.yaml"
	phantom_unix "$T_DIR/over.yaml" && nginx_start "$PH_BACKEND" || { echo "not ok - phantom and nginx start"; exit 1; }
	U=$NGINX_URL A=()
}
over 45 15 10
all alice
is "$(printf '%s\n' "$URIS" | grep '^study://' | sort -u | wc -l)/$(printf '%s\n' "$URIS" | wc -l)" 45/45 \
	"a handler giving 15 entries when asked for 10: all 45 of 45, none twice"
is "$PAGES" 6 "... in pages of at most 10 (10+5, three times)"
over 1000 100 50
all alice
is "$(printf '%s\n' "$URIS" | grep '^study://' | sort -u | wc -l)/$(printf '%s\n' "$URIS" | wc -l)" 1000/1000 \
	"a handler giving 100 entries when asked for 50: all 1,000 of 1,000"
grep -q 'resource list studies: more than the 50 entries asked for' "$PH_LOG"; ok "... and the log says so"
list alice
is "$STATUS/$(jqr '.result.resources | length')" 200/50 "the next request is served"

# ---- a reload between two pages of configured resources and tools: the
# next page starts after the last entry seen, not at an offset
# reload_conf FIRST: resources r<FIRST>..r6 and tools t<FIRST>..t6, two a page
reload_conf() {
	local l=() t=()
	for i in $(seq "$1" 6); do l+=("  - { uri: \"docs://r$i\", name: r$i, text: \"$i\" }"); done
	for i in $(seq "$1" 6); do t+=("  - { name: t$i, description: tool $i, exec: [/bin/true] }"); done
	printf '%s\n' 'server: { name: reload, version: "1.0", page_size: 2 }' 'workers: 2' \
		'resources:' "${l[@]}" 'tools:' "${t[@]}" >"$T_DIR/reload.yaml"
}
reload_conf 1
phantom_unix "$T_DIR/reload.yaml" && nginx_start "$PH_BACKEND" || { echo "not ok - phantom and nginx start"; exit 1; }
U=$NGINX_URL A=()
list alice
rc1=$(jqr .result.nextCursor)
is "$(jqr '[.result.resources[].uri]|join(" ")')" "docs://r1 docs://r2" "reload: the first page of resources"
mpost "$U" 2 tools/list '{}'
tc1=$(jqr .result.nextCursor)
is "$(jqr '[.result.tools[].name]|join(" ")')" "t1 t2" "reload: the first page of tools"
reload_conf 2 # r1 and t1 removed
kill -HUP "$PH_PID"
for _ in $(seq 1 100); do grep -q 'configuration reloaded' "$PH_LOG" && break; sleep 0.05; done
for _ in $(seq 1 50); do # until the new workers answer
	mpost "$U" 3 tools/list '{}'
	[ "$(jqr '.result.tools[0].name')" = t2 ] && break; sleep 0.1
done
is "$(jqr '.result.tools[0].name')" t2 "reload: the new configuration serves (t1 is gone)"
all_from() { # all_from METHOD KEY CURSOR: the entries of every page from CURSOR on
	local c=$3 got=
	while [ -n "$c" ]; do
		mpost "$U" 4 "$1" "$(jq -nc --arg c "$c" '{cursor: $c}')"
		[ "$STATUS" = 200 ] || { echo "ERROR $BODY"; return; }
		got="$got $(jqr "[.result.$2[] | .uri // .name]|join(\" \")")"
		c=$(jqr '.result.nextCursor // empty')
	done
	echo "$got"
}
is "$(all_from resources/list resources "$rc1")" " docs://r3 docs://r4 docs://r5 docs://r6" \
	"reload: the resource pages go on after r2, the last seen (r3 not skipped)"
is "$(all_from tools/list tools "$tc1")" " t3 t4 t5 t6" "reload: the tool pages go on after t2"
mpost "$U" 5 resources/list '{}'
is "$STATUS/$(jqr '[.result.resources[].uri]|join(" ")')" "200/docs://r2 docs://r3" "the next request is served"
done_testing
