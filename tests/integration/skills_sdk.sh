#!/bin/bash
# The official TypeScript SDK client (@modelcontextprotocol/client 2.4.0,
# SkillsClient) against the bundled skills behind nginx, in the 2026-07-28
# and the 2025-11-25 era: list, get, read with digest verification of every
# file, readDirectory. The npm packages are installed (pinned) into a cache
# directory in the build tree; without node/npm or the registry, skipped.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v node >/dev/null || skip_all "node not installed"
command -v npm >/dev/null || skip_all "npm not installed"

CACHE=$top_builddir/tests/npm-cache
CLIENT_VERSION=2.4.0
have_client() {
	[ "$(jq -r .version "$CACHE/node_modules/@modelcontextprotocol/client/package.json" 2>/dev/null)" = "$CLIENT_VERSION" ]
}
if ! have_client; then
	mkdir -p "$CACHE"
	[ -f "$CACHE/package.json" ] || echo '{"private":true}' >"$CACHE/package.json"
	(cd "$CACHE" && timeout 300 npm install --no-audit --no-fund --loglevel=error \
		"@modelcontextprotocol/client@$CLIENT_VERSION") >"$T_DIR/npm.log" 2>&1 ||
		skip_all "npm install @modelcontextprotocol/client@$CLIENT_VERSION failed (offline?)"
	have_client || skip_all "@modelcontextprotocol/client $CLIENT_VERSION not installed"
fi
# bare imports resolve from the script's own directory: run a copy there
cp "$top_srcdir/tests/integration/skills_sdk.mjs" "$CACHE/skills_sdk.mjs"

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: skills-sdk-test, version: "1.0" }
workers: 2
skills: { manifest: $top_srcdir/skills/manifest.yaml }
YAML
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok 1 - nginx starts"; exit 1; }

# the .mjs prints TAP; renumber its lines into this test's plan
for era in modern legacy; do
	node "$CACHE/skills_sdk.mjs" "$NGINX_URL" "$era" >"$T_DIR/sdk-$era.tap" 2>"$T_DIR/sdk-$era.err"
	rc=$?
	while IFS= read -r line; do
		case "$line" in
		"ok "*) T_N=$((T_N + 1)); echo "ok $T_N - ${line#ok * - }" ;;
		"not ok "*) T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - ${line#not ok * - }" ;;
		"#"*) echo "$line" ;;
		esac
	done <"$T_DIR/sdk-$era.tap"
	is "$rc" 0 "the SDK client run ($era) exits 0"
	[ "$rc" -eq 0 ] || sed 's/^/# stderr: /' "$T_DIR/sdk-$era.err" | head -20
done
done_testing
