#!/bin/bash
# The official MCP conformance suite (@modelcontextprotocol/conformance
# 0.2.0-alpha.12, pinned as conformance-next in tests/node/package.json)
# against Phantom serving the fixture app tests/conformance/phantom.yaml.
#
#   behind nginx     --requirements 2026-07-28: the 37 scored scenarios and the
#                    not-scored json-schema-2020-12, http-header-validation and
#                    http-custom-header-server-validation;
#                    the three sep-2640-skills-* extension scenarios, against
#                    the fixture's skill and again the bundled skills/;
#                    the ten tasks-* extension scenarios (each check passes but
#                    the one the suite always skips);
#                    --requirements 2025-11-25, every scenario (legacy
#                    sessions: Mcp-Session-Id, requests pushed mid-call)
#   behind lighttpd  --requirements 2026-07-28 and --requirements 2025-11-25
#                    once more (the pushed requests and parked calls go through
#                    mod_fastcgi as they do through nginx)
#
# The suite only drives servers over HTTP (`server --url`; it has no stdio
# mode), so stdio is left to the SDK clients in tests/integration.
#
# Every scenario is one TAP check (it passes when its checks.json holds no
# FAILURE; on the 2025-11-25 run a WARNING fails too). Each run ends with a
# comment line "# conformance <run>: N passed, M failed".
. "${top_srcdir:-.}/tests/lib.sh"
HERE=$top_srcdir/tests/conformance
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"
node_setup || skip_all "npm packages not installed (run scripts/test.sh)"

. "$HERE/suite.sh"

# the secret that seals requestState, fresh for every run
PHANTOM_CONFORMANCE_SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
export PHANTOM_CONFORMANCE_SECRET
out=$("$PHANTOM" -c "$HERE/phantom.yaml" -t 2>&1)
rc=$?
(exit $rc); ok "the fixture app's configuration loads (phantom-fcgi -t)"
[ "$rc" -ne 0 ] && printf '%s\n' "$out" | sed 's/^/#   /'
# stop: nothing further can run
stop() { done_testing; exit 1; }
phantom_listen "$HERE/phantom.yaml"
ok "phantom-fcgi serves the fixture app"
kill -0 "$PH_PID" 2>/dev/null || stop
nginx_start "$PH_ADDR" || { T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - nginx starts"; stop; }
T0=$SECONDS

# CONFORMANCE_SUBSET=core (run_libfcgi.sh): only the two revisions behind
# nginx, labelled with the FastCGI reader
R=${PHANTOM_FCGI_READER:+ ($PHANTOM_FCGI_READER reader)}
run_2026 "2026-07-28 nginx$R" "$NGINX_URL"
if [ "${CONFORMANCE_SUBSET:-}" = core ]; then
	run_2025 "2025-11-25 nginx$R" "$NGINX_URL"
	kill -0 "$PH_PID" 2>/dev/null
	ok "phantom still running after the suite"
	done_testing
	exit
fi

# the extension scenarios are only selectable one by one
SKILLS="sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory"
# shellcheck disable=SC2086
run_each "skills nginx" skills "skip warn" "$NGINX_URL" $SKILLS

# the tasks extension's scenarios, one by one as well; every check must pass
# but tasks-status-notifications, which the suite itself always skips
# shellcheck disable=SC2086
run_each "tasks nginx" tasks warn "$NGINX_URL" $TASKS

run_2025 "2025-11-25 nginx" "$NGINX_URL"

if type lighttpd_start >/dev/null 2>&1 && [ -f "$top_srcdir/conf/lighttpd.conf" ] &&
   command -v lighttpd >/dev/null; then
	if lighttpd_start "$PH_ADDR"; then
		run_2026 "2026-07-28 lighttpd" "$LIGHTTPD_URL"
		run_2025 "2025-11-25 lighttpd" "$LIGHTTPD_URL"
	else
		T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - lighttpd starts"
	fi
else
	T_N=$((T_N + 1)); echo "ok $T_N # SKIP lighttpd run: conf/lighttpd.conf or lighttpd_start not available"
fi

# the skills scenarios once more against the bundled example skills
# (skills/manifest.yaml: a nested skill, a template, a parameterised path)
FIXTURE_PID=$PH_PID
printf 'server: { name: bundled-skills, version: "1.0" }\nworkers: 2\nskills: { manifest: %s/skills/manifest.yaml }\n' \
	"$top_srcdir" >"$T_DIR/bundled.yaml"
if phantom_listen "$T_DIR/bundled.yaml" && nginx_start "$PH_ADDR"; then
	# shellcheck disable=SC2086
	run_each "bundled skills nginx" bundled "skip warn" "$NGINX_URL" $SKILLS
else
	T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - phantom and nginx start on the bundled skills"
fi

# the worker survived all of it
kill -0 "$FIXTURE_PID" 2>/dev/null
ok "phantom still running after the suite"
diag "conformance runs took $((SECONDS - T0)) s"
done_testing
