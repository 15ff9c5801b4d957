#!/bin/sh
# host_info: an exec tool in plain POSIX sh. It takes no arguments, so it
# needs no JSON parser: it reads (and ignores) the request on stdin and
# writes one JSON result object on stdout. Linux /proc only.
while IFS= read -r _line; do :; done
read -r load1 load5 load15 _rest </proc/loadavg
read -r up _idle </proc/uptime
up=${up%.*}
# hostname and kernel release never hold quotes or backslashes, but a
# script must not trust that: strip them before putting them in JSON
kernel=$(tr -d '"\\' </proc/sys/kernel/osrelease)
host=$(tr -d '"\\' </proc/sys/kernel/hostname)
printf '{"content":[{"type":"text","text":"%s: up %s s, load %s %s %s, Linux %s"}],' \
	"$host" "$up" "$load1" "$load5" "$load15" "$kernel"
printf '"structuredContent":{"hostname":"%s","kernel":"%s","uptime_s":%s,"load":[%s,%s,%s]}}\n' \
	"$host" "$kernel" "$up" "$load1" "$load5" "$load15"
