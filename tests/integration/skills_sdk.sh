#!/bin/bash
# The official TypeScript SDK client (@modelcontextprotocol/client 2.4.0,
# SkillsClient) against the bundled skills behind nginx, in the 2026-07-28
# and the 2025-11-25 era: list, get, read with digest verification of every
# file, readDirectory. The client comes from the pinned npm packages that
# scripts/test.sh installs (tests/node/package.json).
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
node_setup || skip_all "npm packages not installed (run scripts/test.sh)"

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: skills-sdk-test, version: "1.0" }
workers: 2
skills: { manifest: $top_srcdir/skills/manifest.yaml }
YAML
behind_nginx phantom_listen "$T_DIR/phantom.yaml"

for era in modern legacy; do
	node_client skills-sdk.mjs --url "$NGINX_URL" --era "$era"
	is "$NODE_RC" 0 "the SDK client run ($era) exits 0"
done
done_testing
