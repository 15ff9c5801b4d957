#!/bin/sh
# log_levels.sh: an exec tool that logs one line at every level (fd 3,
# debug to emergency), waits DELAY seconds (its argument, default 0) and
# answers with the pid of the worker that ran it (its parent).
cat >/dev/null
for l in debug info notice warning error critical alert emergency; do
	printf '{"level":"%s","data":"at %s"}\n' "$l" "$l" >&3 2>/dev/null
done
sleep "${1:-0}"
printf '{"content":[{"type":"text","text":"logged by %s"}]}\n' "$PPID"
