#!/bin/bash
# skills_bench.sh: skills/list over 1,000 generated skills of 10 files each
# (100 skills, 1,000 files per page), through nginx with wrk, before and
# after the digest cache warms. Not part of make check.
#   top_srcdir=... top_builddir=... bash tests/bench/skills_bench.sh [SECONDS]
# "cold" is measured with skills.digest_cache off, so every request hashes
# every file of its page (what the first request of each page does);
# "warm" is the steady state with the cache on, after one walk per worker.
. "${top_srcdir:-.}/tests/lib.sh"
command -v wrk >/dev/null || skip_all "wrk not installed"
command -v nginx >/dev/null || skip_all "nginx not installed"
D=${1:-10}
S=$T_DIR/skills
mkdir -p "$S"
{
	echo "skills:"
	for i in $(seq -f '%04g' 1 1000); do
		mkdir -p "$S/s$i/ref"
		printf -- '---\nname: skill-%s\ndescription: Generated skill %s for the benchmark\n---\n# Skill %s\n' \
			"$i" "$i" "$i" >"$S/s$i/SKILL.md"
		for f in 1 2 3 4 5 6 7 8 9; do
			head -c $((512 * f)) /dev/zero | tr '\0' "$f" >"$S/s$i/ref/file$f.md"
		done
		echo "  - {path: bench/skill-$i, dir: s$i, cache: {ttl_ms: 60000, scope: public}}"
	done
} >"$S/manifest.yaml"
diag "generated 1000 skills x 10 files ($(du -sh "$S" | cut -f1))"

run() { # NAME DIGEST_CACHE
	cat >"$T_DIR/$1.yaml" <<YAML
server: { name: bench, version: "1.0" }
workers: 2
skills: { manifest: skills/manifest.yaml, digest_cache: $2 }
YAML
	phantom_listen "$T_DIR/$1.yaml" || return 1
	nginx_start "$PH_ADDR" || return 1
	# the ten page bodies, following nextCursor
	: >"$T_DIR/bodies"
	local params='{}' t0 t1
	t0=$(date +%s%N)
	for _ in $(seq 1 10); do
		req 1 skills/list "$params" >>"$T_DIR/bodies"; echo >>"$T_DIR/bodies"
		mpost "$NGINX_URL" 1 skills/list "$params"
		c=$(jqr '.result.nextCursor // empty')
		[ -n "$c" ] && params=$(jq -nc --arg c "$c" '{cursor:$c}')
	done
	t1=$(date +%s%N)
	diag "$1: first walk of 10 pages (100 skills, 1000 files each): $(( (t1 - t0) / 1000000 )) ms"
	is "$(jqr '.result.skills|length')" 100 "$1: the last page has 100 skills"
	METHOD=skills/list BODIES=$T_DIR/bodies wrk -t2 -c8 -d2s -s "$top_srcdir/tests/bench/list_pages.lua" \
		"$NGINX_URL" >/dev/null
	METHOD=skills/list BODIES=$T_DIR/bodies wrk -t2 -c8 -d"${D}s" --latency -s "$top_srcdir/tests/bench/list_pages.lua" \
		"$NGINX_URL" >"$T_DIR/$1.wrk"
	diag "$1: $(grep 'Requests/sec' "$T_DIR/$1.wrk")  p50 $(awk '/ 50%/{print $2}' "$T_DIR/$1.wrk")  p99 $(awk '/ 99%/{print $2}' "$T_DIR/$1.wrk")  $(grep 'bad responses' "$T_DIR/$1.wrk")"
	kill "$PH_PID"; wait "$PH_PID" 2>/dev/null
}
run cold false
run warm true
done_testing
