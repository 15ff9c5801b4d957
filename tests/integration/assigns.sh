#!/bin/bash
# Assigns: attributes an exec authenticator returns next to the principal
# (plan, team) reach exec handlers on stdin, {{assigns.NAME}} in prompt and
# skill templates, and are bound into requestState: a retry by the same
# principal with other assigns, or by another principal, is refused. Too
# large, too deep or non-object assigns fail the request; the server serves on.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"

big=$(head -c 5000 /dev/zero | tr '\0' x)
cat >"$T_DIR/authenticator" <<SH
#!/bin/bash
case "\$(jq -r '.headers.authorization // ""')" in
"Bearer alice-pro") echo '{"decision":"allow","principal":"alice","assigns":{"plan":"pro","team":"red","seats":5}}';;
"Bearer alice-free") echo '{"decision":"allow","principal":"alice","assigns":{"plan":"free","team":"red","seats":5}}';;
"Bearer bob") echo '{"decision":"allow","principal":"bob","assigns":{"plan":"pro","team":"red","seats":5}}';;
"Bearer plain") echo '{"decision":"allow","principal":"carol"}';;
"Bearer deep") echo '{"decision":"allow","principal":"d","assigns":{"a":{"b":{"c":{"d":{"e":1}}}}}}';;
"Bearer big") echo '{"decision":"allow","principal":"b","assigns":{"x":"$big"}}';;
"Bearer list") echo '{"decision":"allow","principal":"l","assigns":["pro"]}';;
*) echo '{"decision":"unauthorized"}';;
esac
SH
cp "$top_srcdir/tests/handlers/assigns_tool.sh" "$T_DIR/tool.sh"
chmod 755 "$T_DIR/authenticator" "$T_DIR/tool.sh"
mkdir -p "$T_DIR/skills/plan-guide"
printf -- '---\nname: plan-guide\ndescription: What your plan includes.\n---\nYou are {{principal}} on the {{ assigns.plan }} plan of team {{assigns.team}} ({{assigns.seats}} seats{{assigns.nope}}).\n' \
	>"$T_DIR/skills/plan-guide/SKILL.md.tmpl"
printf 'skills:\n  - path: plan-guide\n    dir: plan-guide\n' >"$T_DIR/skills/manifest.yaml"
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: assigns-test, version: "1.0" }
workers: 2
request_state: { secret_env: ASSIGNS_SECRET }
auth: { mode: exec, command: [./authenticator], timeout_ms: 2000 }
tools:
  - { name: whoami, description: The assigns, exec: [./tool.sh] }
  - { name: twice, description: Two rounds, exec: [./tool.sh] }
prompts:
  - name: plan
    messages: [ { role: user, text: "Plan {{assigns.plan}}, team {{ assigns.team }}, {{assigns.missing}}." } ]
skills: { manifest: skills/manifest.yaml }
YAML
ASSIGNS_SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
export ASSIGNS_SECRET
behind_nginx phantom_listen "$T_DIR/phantom.yaml"
as() { local tok=$1; shift; mpost "$U" "$@" -H "Authorization: Bearer $tok"; }

as alice-pro 1 tools/call '{"name":"whoami","arguments":{}}'
is "$(jqr '.result.content[0].text')" '{"plan":"pro","team":"red","seats":5}' "an exec handler gets the assigns on stdin"
as plain 2 tools/call '{"name":"whoami","arguments":{}}'
is "$(jqr '.result.content[0].text')" '{}' "without assigns a handler gets {}"
as alice-pro 3 prompts/get '{"name":"plan"}'
is "$(jqr '.result.messages[0].content.text')" "Plan pro, team red, ." "{{assigns.NAME}} in a prompt (a missing one is empty)"
as alice-free 4 prompts/get '{"name":"plan"}'
is "$(jqr '.result.messages[0].content.text')" "Plan free, team red, ." "... per principal's assigns"
as alice-pro 5 resources/read '{"uri":"skill://plan-guide/SKILL.md"}'
like "$(jqr '.result.contents[0].text')" "You are alice on the pro plan of team red \(5 seats\)\." \
	"{{assigns.NAME}} in a skill template (a number as JSON, a missing one empty)"
is "$(jqr .result.cacheScope)" private "a skill file rendered from assigns is cacheScope private"
as alice-pro 6 skills/get '{"uri":"skill://plan-guide/SKILL.md"}'
d_pro=$(jqr '.result.skill.resources[0].digest')
as alice-free 7 skills/get '{"uri":"skill://plan-guide/SKILL.md"}'
d_free=$(jqr '.result.skill.resources[0].digest')
[ -n "$d_pro" ] && [ "$d_pro" != null ] && [ "$d_pro" != "$d_free" ]
ok "the skill's digest follows the assigns it was rendered with"

# requestState is bound to the principal and its assigns
as alice-pro 8 tools/call '{"name":"twice","arguments":{}}'
is "$(jqr .result.resultType)" input_required "round 1: input_required"
rs=$(jqr .result.requestState)
as alice-pro 9 tools/call "$(jq -nc --arg s "$rs" '{name:"twice",arguments:{},requestState:$s}')"
is "$(jqr '.result.content[0].text')" "retried for alice on pro" "the retry with the same assigns is served"
as alice-free 10 tools/call "$(jq -nc --arg s "$rs" '{name:"twice",arguments:{},requestState:$s}')"
is "$(jqr .error.code)" -32602 "the same principal with other assigns: refused (-32602)"
as bob 11 tools/call "$(jq -nc --arg s "$rs" '{name:"twice",arguments:{},requestState:$s}')"
is "$(jqr .error.code)" -32602 "another principal with the same assigns: refused"

for t in deep big list; do
	as $t 12 tools/call '{"name":"whoami","arguments":{}}'
	is "$STATUS/$(jqr .error.code)" 500/-32603 "assigns that are too $t: the request fails (500)"
done
grep -q 'assigns" is nested deeper than auth.assigns_depth' "$PH_LOG"; ok "too deep is logged"
grep -q 'assigns" is larger than auth.max_assigns' "$PH_LOG"; ok "too large is logged"
grep -q 'assigns" is not an object' "$PH_LOG"; ok "not an object is logged"
as alice-pro 13 tools/call '{"name":"whoami","arguments":{}}'
is "$STATUS" 200 "the next request is served"

# phantom-skills(5): a placeholder other than a parameter, principal, user
# or assigns.NAME is a configuration problem naming the file and line
mkdir -p "$T_DIR/bad/skills/plan-guide"
printf -- '---\nname: plan-guide\ndescription: d\n---\nok {{ assigns.plan }}\n{{plan}}\n' \
	>"$T_DIR/bad/skills/plan-guide/SKILL.md.tmpl"
cp "$T_DIR/skills/manifest.yaml" "$T_DIR/bad/skills/"
printf '%s\n' 'server: { name: bad, version: "1.0" }' 'skills: { manifest: skills/manifest.yaml }' >"$T_DIR/bad/phantom.yaml"
out=$("$PHANTOM" -t -c "$T_DIR/bad/phantom.yaml" 2>&1); rc=$?
is "$rc" 1 "-t refuses a skill template with an unknown placeholder"
like "$out" 'SKILL.md.tmpl:6: unknown placeholder \{\{plan\}\} \(known: principal, user, assigns.NAME' \
	"... naming the file, the line and the known ones"
done_testing
