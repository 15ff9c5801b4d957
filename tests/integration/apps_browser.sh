#!/bin/bash
# A real MCP Apps host in a real browser: headless Chromium (Debian's,
# driven by playwright-core) loads a host page built on the extension's
# AppBridge (@modelcontextprotocol/ext-apps, bundled here at test time with
# the SDK v2 client; nothing of it is committed) from its own origin. The
# page talks to the bundled example application (conf/phantom.yaml with
# http.cors for that origin) behind the shipped nginx configuration: it
# lists the tools, reads the host-info view (ui://phantom/host-info),
# renders it in a sandboxed frame and hands it the result of host_info; the
# view's Refresh button calls host_info through the host, which the
# server's log shows, and the view shows the new result. Once with the
# client's default (a 2025-11-25 session, over CORS) and once pinned to
# 2026-07-28. The screenshots are kept next to this test's log.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
CHROMIUM=$(command -v chromium) || skip_all "chromium not installed"
node_setup || skip_all "npm packages not installed (run scripts/test.sh)"
for p in @modelcontextprotocol/ext-apps playwright-core rolldown; do
	[ -d "$NODE_DIR/node_modules/$p" ] || skip_all "$p not installed (run scripts/test.sh)"
done

# the bundled configuration, copied with http.cors for the page's origin;
# its relative paths find the examples and skills of the source tree
page_port=$(free_port)
ORIGIN=http://127.0.0.1:$page_port
mkdir -p "$T_DIR/tree/conf" "$T_DIR/site"
ln -s "$top_srcdir/examples" "$T_DIR/tree/examples"
ln -s "$top_srcdir/skills" "$T_DIR/tree/skills"
sed -e "s|^    #origins: \[https://inspector.example.com\]|    origins: [\"$ORIGIN\"]|" \
	"$top_srcdir/conf/phantom.yaml" >"$T_DIR/tree/conf/phantom.yaml"
grep -q "origins: \[\"$ORIGIN\"\]" "$T_DIR/tree/conf/phantom.yaml"
ok "the copy of conf/phantom.yaml allows the page's origin (http.cors.origins)"

# the host page: AppBridge and the client bundled for the browser
cp "$top_srcdir/tests/clients/apps-host.html" "$T_DIR/site/index.html"
(cd "$NODE_DIR" && timeout 60 "$NODE" node_modules/rolldown/bin/cli.mjs "$NODE_CLIENTS/apps-host.mjs" \
	--platform browser --format esm -o "$T_DIR/site/host.js") >"$T_DIR/bundle.log" 2>&1
is "$?" 0 "the host page's script bundles (AppBridge, the SDK v2 client)"
(cd "$T_DIR/site" && exec python3 -m http.server --bind 127.0.0.1 "$page_port") >"$T_DIR/site.log" 2>&1 &
T_PIDS+=("$!")
wait_port "$page_port" || { echo "not ok - the page server starts"; exit 1; }

phantom_up "$T_DIR/tree/conf/phantom.yaml" --workers 2 || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_ADDR" || { echo "not ok - nginx starts"; exit 1; }

# browse ERA [QUERY]: one run of the host page; the screenshot is kept as
# apps_browser-ERA.png next to this test's log
browse() {
	local shot=$top_builddir/tests/integration/apps_browser-$1.png
	rm -f "$shot"
	CHROMIUM=$CHROMIUM node_client apps-browser.mjs "$ORIGIN/index.html?mcp=$NGINX_URL${2:-}" "$PH_LOG" "$shot" \
		"$(cat /proc/sys/kernel/hostname)" "$1"
	[ -s "$shot" ]
	ok "$1: the screenshot is kept"
	diag "screenshot: $shot"
}
browse 2025-11-25
browse 2026-07-28 "&era=2026-07-28"
like "$(grep ' method=resources/read ' "$PH_LOG")" "target=ui://phantom/host-info status=200" \
	"the server's log shows the host's resources/read of the view"
still_serving "$NGINX_URL" "the browser host"
done_testing
