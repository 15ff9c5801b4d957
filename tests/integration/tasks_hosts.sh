#!/bin/bash
# Tasks across hosts: two Phantom instances (tasks.host alpha and beta,
# each its own task store) behind one nginx upstream, routed as
# conf/nginx.conf documents: tools/call goes to either instance, and
# tasks/get and tasks/cancel reach the instance that holds the task by the
# host named in the task id (Mcp-Name). Asked directly, the other instance
# does not know the task.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
EXT='{"extensions":{"io.modelcontextprotocol/tasks":{}}}'
cat >"$T_DIR/slow.sh" <<'SH'
#!/bin/sh
cat >/dev/null
sleep 1
echo '{"content":[{"type":"text","text":"done"}]}'
SH
chmod 0755 "$T_DIR/slow.sh"
for h in alpha beta; do
	cat >"$T_DIR/$h.yaml" <<YAML
server: { name: tasks-$h, version: "1.0" }
workers: 2
subscriptions: { control_socket: '' }
tasks: { dir: $T_DIR/tasks-$h, host: $h }
tools:
  - { name: slow, description: one second, task: required, exec: [$T_DIR/slow.sh] }
YAML
	phantom_listen "$T_DIR/$h.yaml" || { echo "not ok 1 - phantom $h starts"; exit 1; }
	eval "ADDR_$h=\$PH_ADDR"
done

# the documented routing, uncommented and pointed at the two instances
port=$(free_port)
dir=$(run_dir "nginx-$port")
conf_subst "$top_srcdir/conf/nginx.conf" "$dir/nginx.conf" "$port" "$dir" \
	-e "s#server unix:/run/phantom/phantom.sock;#server $ADDR_alpha; server $ADDR_beta;#" \
	-e "s#^    \#upstream phantom_alpha { server 10.0.0.1:9000; }#    upstream phantom_alpha { server $ADDR_alpha; }#" \
	-e "s#^    \#upstream phantom_beta { server 10.0.0.2:9000; }#    upstream phantom_beta { server $ADDR_beta; }#" \
	-e '/^    #map "\$http_mcp_method/,/^    #}/s/^    #/    /' \
	-e '/location = \/mcp/,/}/s/fastcgi_pass phantom;/fastcgi_pass $phantom_route;/'
grep -q 'fastcgi_pass \$phantom_route;' "$dir/nginx.conf" && grep -q '^    map ' "$dir/nginx.conf"
ok "conf/nginx.conf's multi-host routing, uncommented"
nginx -c "$dir/nginx.conf" -e "$dir/error.log" || { echo "not ok - nginx starts"; cat "$dir/error.log"; exit 1; }
T_CLEANUP+=("nginx -c '$dir/nginx.conf' -e '$dir/error.log' -s stop; sleep 0.1")
wait_port "$port"
U=http://127.0.0.1:$port/mcp

# tcall URL ID METHOD PARAMS: a request declaring the extension
tcall() {
	local name; name=$(printf '%s' "$4" | jq -r '.name // .taskId // empty')
	post "$1" "$(printf '%s' "$4" | jq -c --argjson id "$2" --arg m "$3" --arg v "$MODERN" --argjson caps "$EXT" \
		'{jsonrpc:"2.0",id:$id,method:$m,params:(. + {_meta:{"io.modelcontextprotocol/protocolVersion":$v,
		"io.modelcontextprotocol/clientCapabilities":$caps}})}')" \
		-H "MCP-Protocol-Version: $MODERN" -H "Mcp-Method: $3" ${name:+-H "Mcp-Name: $name"}
}
ids=
for i in $(seq 1 8); do
	tcall "$U" "$i" tools/call '{"name":"slow","arguments":{}}'
	ids="$ids $(jqr .result.taskId)"
done
hosts=$(for id in $ids; do echo "${id%%.*}"; done | sort -u | tr '\n' ' ')
is "$hosts" "alpha beta " "the calls made tasks on both instances"
sleep 1.5
good=0
for id in $ids; do
	tcall "$U" 20 tasks/get "{\"taskId\":\"$id\"}"
	[ "$(jqr .result.status)" = completed ] && good=$((good + 1))
done
is "$good" 8 "tasks/get through nginx reaches the instance of every task"
first=${ids# }; first=${first%% *}
other=$ADDR_beta; [ "${first%%.*}" = beta ] && other=$ADDR_alpha
# straight to the other instance, with a plain nginx of its own
nginx_start "$other"
tcall "$NGINX_URL" 21 tasks/get "{\"taskId\":\"$first\"}"
is "$(jqr .error.code)" -32602 "the other instance does not know the task"
tcall "$U" 22 tasks/cancel "{\"taskId\":\"$first\"}"
is "$(jqr .result.resultType)" complete "tasks/cancel is routed the same way"
done_testing
