#!/bin/sh
# countdown: progress from a script. Every line written on fd 3, such as
# {"progress": 1, "total": 3, "message": "..."}, becomes a
# notifications/progress for a client that asked for progress; stdout
# carries the one result object. Arguments: from (integer), step_ms.
IFS= read -r req
from=$(printf '%s' "$req" | sed -n 's/.*"from":\([0-9][0-9]*\).*/\1/p')
step=$(printf '%s' "$req" | sed -n 's/.*"step_ms":\([0-9][0-9]*\).*/\1/p')
: "${from:=3}" "${step:=100}"
i=1
while [ "$i" -le "$from" ]; do
	sleep "$((step / 1000)).$(printf '%03d' $((step % 1000)))"
	printf '{"progress":%d,"total":%d,"message":"%d of %d"}\n' "$i" "$from" "$i" "$from" >&3
	i=$((i + 1))
done
echo "countdown: done after $from steps" >&2
printf '{"content":[{"type":"text","text":"liftoff after %d steps"}]}\n' "$from"
