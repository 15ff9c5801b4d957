#!/bin/bash
# tests/fuzz/run.sh: runs each libFuzzer harness (built by make when configure
# found clang) for a short, bounded time from its seed corpus, as part of
# make check. Skips when the harnesses were not built.
#
# Longer runs, e.g. ten minutes each:
#   FUZZ_SECONDS=600 FUZZ_RUNS=0 make check TESTS=tests/fuzz/run.sh
# or by hand, keeping what the fuzzer learns in a corpus directory:
#   make fuzz
#   mkdir -p /tmp/rpc && tests/fuzz/fuzz_rpc -close_fd_mask=2 -jobs=2 \
#       -dict=$srcdir/tests/fuzz/rpc.dict /tmp/rpc $srcdir/tests/fuzz/corpus/rpc
# (each harness NAME has its seeds in corpus/NAME and maybe NAME.dict).
# A crash leaves its input in tests/fuzz/artifacts-NAME/; replay it with
#   tests/fuzz/fuzz_NAME tests/fuzz/artifacts-NAME/crash-...
. "${top_srcdir:-$(dirname "$0")/../..}/tests/lib.sh"

secs=${FUZZ_SECONDS:-10}
runs=${FUZZ_RUNS:-500000}   # 0: no limit but the time
fdir=$top_builddir/tests/fuzz
# every harness that was built: fuzz_NAME with seeds in corpus/NAME
names=""
for b in "$fdir"/fuzz_*; do
	n=${b##*/fuzz_}
	[ -x "$b" ] && [ -d "$top_srcdir/tests/fuzz/corpus/$n" ] && names="$names $n"
done
[ -n "$names" ] || skip_all "fuzz harnesses not built (configure did not find clang)"

for n in $names; do
	work=$T_DIR/$n
	mkdir -p "$work/corpus" "$work/artifacts"
	limit=""
	[ "$runs" != 0 ] && limit="-runs=$runs"
	dict=""
	[ -f "$top_srcdir/tests/fuzz/$n.dict" ] && dict="-dict=$top_srcdir/tests/fuzz/$n.dict"
	# -close_fd_mask=2: the request log of fuzz_rpc goes nowhere; libFuzzer
	# and the sanitizers keep a private copy of stderr for their reports.
	# New inputs go to the scratch corpus, never into the source tree.
	# shellcheck disable=SC2086
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
	"$fdir/fuzz_$n" -max_total_time="$secs" $limit -timeout=10 -rss_limit_mb=2048 \
		-max_len=16384 -close_fd_mask=2 -print_final_stats=1 \
		$dict -artifact_prefix="$work/artifacts/" \
		"$work/corpus" "$top_srcdir/tests/fuzz/corpus/$n" >"$work/log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
	seeds=$(ls "$top_srcdir/tests/fuzz/corpus/$n" | wc -l)
	grep -q "INFO: seed corpus: files: $seeds " "$work/log" || grep -q "INFO: seed corpus: files: $seeds$" "$work/log"
	ok "fuzz_$n: loads its $seeds seeds"
	[ "$rc" -eq 0 ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$work/log"
	ok "fuzz_$n: ${execs:-0} inputs in at most ${secs}s without a crash, leak or UB"
	if [ "$rc" -ne 0 ]; then
		tail -40 "$work/log" | sed 's/^/# /'
		mkdir -p "$fdir/artifacts-$n"
		cp "$work"/artifacts/* "$fdir/artifacts-$n/" 2>/dev/null
		diag "the failing input is in $fdir/artifacts-$n/"
	fi
	[ "${execs:-0}" -gt 1000 ]
	ok "fuzz_$n: ran more than 1000 inputs"
done
done_testing
