#!/bin/bash
# A 2025-11-25 client over --stdio gets what an HTTP session gets (issue 30):
# the SDK v1 client (StdioClientTransport) sets its log level and the next
# calls send only the levels at or above it; resources/subscribe hears one
# resources/updated per write of the file and per announcement of a
# handler (resourcesUpdated, from a call process too); unsubscribe hears
# nothing more; each SIGHUP sends the list_changed of exactly the lists the
# stdio principal's view of changed: a tool added it may see (one), a tool
# it may not see (none), nothing changed (none), its allow-list alone
# widened (one), a resource added (resources only). Run with calls in call
# processes (stdio.concurrency 8) and in the one process (1).
. "${top_srcdir:-.}/tests/lib.sh"
node_setup || skip_all "the npm packages are not installed"

cat >"$T_DIR/logs.sh" <<'SH'
#!/bin/sh
cat >/dev/null
for l in debug info warning error; do printf '{"level":"%s","data":"at %s"}\n' "$l" "$l" >&3; done
printf '{"content":[{"type":"text","text":"logged"}]}\n'
SH
cat >"$T_DIR/announce.sh" <<'SH'
#!/bin/sh
cat >/dev/null
printf '{"content":[{"type":"text","text":"changed"}],"resourcesUpdated":["app://thing"]}\n'
SH
cat >"$T_DIR/thing.sh" <<'SH'
#!/bin/sh
cat >/dev/null
printf '{"contents":[{"uri":"app://thing","mimeType":"text/plain","text":"a thing"}]}\n'
SH
chmod 0755 "$T_DIR"/*.sh
echo data >"$T_DIR/data.txt"

# conf FILE CONCURRENCY TOOLS-ALLOWED [EXTRA TOOL LINES] [EXTRA RESOURCE LINE]
conf() {
	cat >"$1" <<YAML
server: { name: stdio-session, version: "1.0" }
stdio: { concurrency: $2 }
auth:
  mode: none
  stdio_principal: sam
  allow:
    sam: { tools: [$3] }
tools:
  - { name: logs, description: logs at four levels, exec: [$T_DIR/logs.sh] }
  - { name: announce, description: announces app://thing, exec: [$T_DIR/announce.sh] }
${4-}
prompts:
  - { name: p, description: a prompt, messages: [ { role: user, text: hi } ] }
resources:
  - { uri: "doc://data", name: data, file: $T_DIR/data.txt, mime_type: text/plain }
  - { uri: "app://thing", name: thing, exec: [$T_DIR/thing.sh] }
${5-}
YAML
}
allowed=logs,announce,added
added='  - { name: added, description: a tool sam may see, exec: [/bin/true] }'
hidden='  - { name: hidden, description: a tool sam may not see, exec: [/bin/true] }'
other='  - { uri: "doc://other", name: other, text: other }'
want='[{"what":"a tool added that sam may see","got":[1,0,0]},
{"what":"a tool added that sam may not see","got":[0,0,0]},
{"what":"nothing changed","got":[0,0,0]},
{"what":"sam may now see that tool: its allow-list alone","got":[1,0,0]},
{"what":"a resource added","got":[0,0,1]}]'
for n in 8 1; do
	d=$T_DIR/c$n
	mkdir -p "$d"
	conf "$d/phantom.yaml" "$n" "$allowed"
	"$PHANTOM" -c "$d/phantom.yaml" -t >"$d/t.out" 2>&1; ok "concurrency $n: the configuration checks"
	conf "$d/s1.yaml" "$n" "$allowed" "$added"
	conf "$d/s2.yaml" "$n" "$allowed" "$added
$hidden"
	{ cat "$d/s2.yaml"; echo "# a comment"; } >"$d/s3.yaml"
	conf "$d/s4.yaml" "$n" "$allowed,hidden" "$added
$hidden"
	conf "$d/s5.yaml" "$n" "$allowed,hidden" "$added
$hidden" "$other"
	echo data >"$T_DIR/data.txt"
	node_client sdk-v1-stdio-session.mjs --tag "stdio.concurrency $n" --stdio "$PHANTOM" \
		--arg -c --arg "$d/phantom.yaml" --arg --stdio --conf "$d/phantom.yaml" --file "$T_DIR/data.txt" \
		--stage "$d/s1.yaml" --stage "$d/s2.yaml" --stage "$d/s3.yaml" --stage "$d/s4.yaml" \
		--stage "$d/s5.yaml" --want "$want"
done
done_testing
