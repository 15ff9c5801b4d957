#!/bin/bash
# Phantom behind the real Apache httpd: the shipped conf/apache.conf
# (mod_proxy_fcgi, Phantom on a unix socket) and the shared-hosting pair
# conf/apache-fcgid.conf + conf/htaccess (mod_fcgid starts Phantom). Both run
# the same HTTP-rule checks as nginx.sh.
. "${top_srcdir:-.}/tests/lib.sh"
command -v apache2 >/dev/null || skip_all "apache2 not installed"
[ -e /usr/lib/apache2/modules/mod_proxy_fcgi.so ] || skip_all "mod_proxy_fcgi missing"

TEST_HTTP='health: /healthz' test_conf "$T_DIR/phantom.yaml" apache-test 'workers: 2'
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
apache_start "$top_srcdir/conf/apache.conf" "" \
	-e "s#unix:/run/phantom/phantom.sock|#unix:$PH_SOCK|#" ||
	{ echo "not ok 1 - apache (proxy_fcgi) starts"; exit 1; }
U=$APACHE_URL
http_rule_checks "$U" apache-test
body=$(curl -s -w ' %{http_code}' "${U%/mcp}/healthz")
is "$(jq -r .status <<<"${body% *}") ${body##* }" "ok 200" "the shipped configuration routes /healthz to Phantom"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary '{}' "${U}x")
is "$STATUS" 403 "proxy_fcgi: only exactly /mcp reaches Phantom"
# mod_proxy_fcgi streams the body: the shipped configuration bounds slow clients
apache2 -f "$APACHE_DIR/apache.conf" -M 2>/dev/null | grep -q reqtimeout_module
ok "the shipped configuration loads mod_reqtimeout"
like "$(grep '^RequestReadTimeout' "$APACHE_DIR/apache.conf")" 'body=[0-9]+,MinRate=[0-9]+' \
	"the shipped configuration sets a RequestReadTimeout for the body"
kill "$APACHE_PID"; wait_gone "$APACHE_PID"

# ---- mod_fcgid with the user's .htaccess --------------------------------------
if [ ! -e /usr/lib/apache2/modules/mod_fcgid.so ]; then
	diag "mod_fcgid not installed: shared-hosting checks skipped"
	done_testing; exit
fi
test_conf "$T_DIR/fcgid.yaml" fcgid-test
PH_CONF=$T_DIR/fcgid.yaml
dir=$(run_dir apache-fcgid)
htaccess_site "$dir"
apache_start "$top_srcdir/conf/apache-fcgid.conf" "$dir" ||
	{ echo "not ok $((T_N + 1)) - apache (mod_fcgid) starts"; done_testing; exit 1; }
U=$APACHE_URL
http_rule_checks "$U" fcgid-test
app=$(pgrep -P "$APACHE_PID" -f apache2 | while read -r c; do pgrep -P "$c" -f phantom-fcgi; done | head -1)
like "$app" '^[0-9]+$' "mod_fcgid started Phantom"
is "$(nworkers "$app")" 0 "under mod_fcgid Phantom runs without a master"
grep -q "phantom\[$app\] method=server/discover" "$APACHE_DIR/apache-error.log"
ok "Phantom's request log goes to Apache's error log"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary '{}' "${U}.fcgi")
is "$STATUS" 403 "the binary itself is not reachable as /mcp.fcgi"
still_serving "$U" "the refused /mcp.fcgi"
done_testing
