#!/bin/bash
# Per-principal allow-lists on every method, behind nginx: what is not allowed
# is missing from lists and capabilities, and calling, getting, reading,
# completing or directory-reading it fails exactly like an unknown name.
# alice has allow-lists, bob has none (sees everything), carol has empty
# lists (sees nothing). Skipped until the tools, prompts, resources and skills
# features are in the build.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

bearer_token T_A H_A; bearer_token T_B H_B; bearer_token T_C H_C; bearer_token T_D H_D
printf '#!/bin/sh\ncat >/dev/null\nprintf '"'"'{"content":[{"type":"text","text":"ran"}]}\\n'"'"'\n' >"$T_DIR/tool.sh"
chmod 0755 "$T_DIR/tool.sh"
mkdir -p "$T_DIR/notes" && printf 'note one\n' >"$T_DIR/notes/one" && chmod -R a+rX "$T_DIR/notes"
test_conf "$T_DIR/phantom.yaml" allow-test 'workers: 2' \
	'tools:' \
	'  - { name: search, description: Search, exec: [./tool.sh] }' \
	'  - { name: delete, description: Delete, exec: [./tool.sh] }' \
	'prompts:' \
	'  - { name: pub, messages: [ { role: user, text: public } ] }' \
	'  - name: secret' \
	'    arguments: [ { name: x, complete: [alpha, beta] } ]' \
	'    messages: [ { role: user, text: "secret {{x}}" } ]' \
	'resources:' \
	'  - { uri: "docs://a", name: a, text: A }' \
	'  - { uri: "docs://b", name: b, text: B }' \
	'resource_templates:' \
	'  - { uri_template: "notes://{id}", name: notes, dir: notes, complete: { id: [one, two] } }' \
	'  - { uri_template: "memo://{id}", name: memo, dir: notes, complete: { id: [one, two] } }' \
	"skills: { manifest: $top_srcdir/skills/manifest.yaml }" \
	'auth:' \
	'  mode: bearer' \
	"  tokens: [ { principal: alice, sha256: $H_A }, { principal: bob, sha256: $H_B }," \
	"            { principal: carol, sha256: $H_C }, { principal: dave, sha256: $H_D } ]" \
	'  allow:' \
	'    alice: { tools: [search], prompts: [pub], resources: ["docs://a", "notes://{id}"], skills: [acme/billing/refunds] }' \
	'    carol: { tools: [], prompts: [], resources: [], skills: [] }' \
	'    dave: { tools: ["*"], prompts: [pub], skills: ["*"] }'
"$PHANTOM" -c "$T_DIR/phantom.yaml" -t >"$T_DIR/t.out" 2>&1 ||
	skip_all "tools, prompts, resources or skills are not in this build: $(head -1 "$T_DIR/t.out")"
phantom_listen "$T_DIR/phantom.yaml" || { echo "not ok 1 - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok 1 - nginx starts"; exit 1; }
U=$NGINX_URL
A=(-H "Authorization: Bearer $T_A") B=(-H "Authorization: Bearer $T_B") C=(-H "Authorization: Bearer $T_C")
D=(-H "Authorization: Bearer $T_D")

# as WHO ID METHOD PARAMS: a modern request as alice, bob or carol
as() {
	local who=$1; shift
	case $who in alice) mpost "$U" "$1" "$2" "$3" "${A[@]}" ;; bob) mpost "$U" "$1" "$2" "$3" "${B[@]}" ;;
	carol) mpost "$U" "$1" "$2" "$3" "${C[@]}" ;; dave) mpost "$U" "$1" "$2" "$3" "${D[@]}" ;; esac
}
# same_error WHO METHOD HIDDEN-PARAMS ABSENT-PARAMS NAME-HIDDEN NAME-ABSENT DESC: the
# hidden item fails like an absent one (status, code, message with the name swapped)
same_error() {
	local who=$1 m=$2 hp=$3 ap=$4 hn=$5 an=$6 d=$7 s1 b1
	as "$who" 1 "$m" "$hp"; s1=$STATUS; b1=$(jqr '.error | [.code, .message] | @json' | sed "s#$hn#NAME#g")
	as "$who" 1 "$m" "$ap"
	is "$s1 $b1" "$STATUS $(jqr '.error | [.code, .message] | @json' | sed "s#$an#NAME#g")" "$d"
	like "$b1" '^\[-?[0-9]+,' "$d (it is an error)"
}

# ---- discover / initialize capabilities
as bob 1 server/discover '{}'
is "$(jqr '.result.capabilities | [has("tools"), has("prompts"), has("resources")] | @json')" \
	'[true,true,true]' "bob: discover advertises tools, prompts, resources"
is "$(jqr '.result.capabilities.extensions["io.modelcontextprotocol/skills"] != null')" true "bob: and skills"
as carol 2 server/discover '{}'
is "$(jqr '.result.capabilities | [has("tools"), has("prompts"), has("resources")] | @json')" \
	'[false,false,false]' "carol (empty lists): no tools, prompts or resources capability"
is "$(jqr '.result.capabilities.extensions["io.modelcontextprotocol/skills"] // "absent"')" absent \
	"carol: no skills extension"
is "$(jqr .result.cacheScope)" private "allow-lists configured: discover is cacheScope private"
post "$U" '{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' "${C[@]}"
is "$(jqr '.result.capabilities | [has("tools"), has("prompts")] | @json')" '[false,false]' \
	"carol: legacy initialize capabilities honour the allow-list too"

# ---- tools
as alice 3 tools/list '{}'
is "$(jqr '[.result.tools[].name] | @json')" '["search"]' "alice: tools/list shows only search"
is "$(jqr .result.cacheScope)" private "alice: tools/list is private"
as bob 4 tools/list '{}'
is "$(jqr '[.result.tools[].name] | sort | @json')" '["delete","search"]' "bob: tools/list shows both"
is "$(jqr .result.cacheScope)" private "bob: tools/list is private too (allow-lists exist)"
as alice 5 tools/call '{"name":"search","arguments":{}}'
is "$(jqr '.result.content[0].text')" ran "alice: tools/call search runs"
same_error alice tools/call '{"name":"delete","arguments":{}}' '{"name":"nosuch","arguments":{}}' delete nosuch \
	"alice: tools/call delete fails like an unknown tool"
as bob 6 tools/call '{"name":"delete","arguments":{}}'
is "$(jqr '.result.content[0].text')" ran "bob: tools/call delete runs"

# ---- prompts and completion
as alice 7 prompts/list '{}'
is "$(jqr '[.result.prompts[].name] | @json')" '["pub"]' "alice: prompts/list shows only pub"
same_error alice prompts/get '{"name":"secret","arguments":{"x":"a"}}' '{"name":"nosuch","arguments":{"x":"a"}}' \
	secret nosuch "alice: prompts/get secret fails like an unknown prompt"
as bob 8 prompts/get '{"name":"secret","arguments":{"x":"a"}}'
is "$(jqr '.result.messages[0].content.text')" "secret a" "bob: prompts/get secret"
same_error alice completion/complete \
	'{"ref":{"type":"ref/prompt","name":"secret"},"argument":{"name":"x","value":"a"}}' \
	'{"ref":{"type":"ref/prompt","name":"nosuch"},"argument":{"name":"x","value":"a"}}' secret nosuch \
	"alice: completion of a hidden prompt fails like an unknown one"
as bob 9 completion/complete '{"ref":{"type":"ref/prompt","name":"secret"},"argument":{"name":"x","value":"a"}}'
is "$(jqr '.result.completion.values | @json')" '["alpha"]' "bob: completion of the prompt argument"

# ---- resources, templates, completion of templates
as alice 10 resources/list '{}'
is "$(jqr '[.result.resources[].uri] | @json')" \
	'["docs://a","skill://acme/billing/refunds/SKILL.md","skill://acme/billing/refunds/partial-refunds/SKILL.md"]' \
	"alice: resources/list shows only docs://a and the SKILL.md of her skills (nested ones granted)"
as bob 11 resources/list '{}'
is "$(jqr '[.result.resources[].uri] | sort | @json')" \
	'["docs://a","docs://b","skill://acme/billing/refunds/SKILL.md","skill://acme/billing/refunds/partial-refunds/SKILL.md","skill://git-workflow/SKILL.md","skill://studies/42/study-review/SKILL.md"]' \
	"bob: both resources and every listed skill's SKILL.md"
is "$(jqr '.result.resources[] | select(.uri=="skill://git-workflow/SKILL.md") | [.name, .mimeType, (.description|length > 0)] | @json')" \
	'["git-workflow","text/markdown",true]' "a SKILL.md resource has the frontmatter's name and description, text/markdown"
as carol 11 resources/list '{}'
is "$(jqr '.result.resources | length')" 0 "carol (empty allow-lists): no resource, no SKILL.md"
as alice 12 resources/templates/list '{}'
is "$(jqr '[.result.resourceTemplates[].uriTemplate] | @json')" '["notes://{id}"]' \
	"alice: templates/list shows only notes://{id}"
as alice 13 resources/read '{"uri":"docs://a"}'
is "$(jqr '.result.contents[0].text')" A "alice: reads docs://a"
same_error alice resources/read '{"uri":"docs://b"}' '{"uri":"docs://zzz"}' docs://b docs://zzz \
	"alice: reading docs://b fails like a missing resource"
as alice 14 resources/read '{"uri":"notes://one"}'
is "$(jqr '.result.contents[0] | .text // (.blob | @base64d)')" "note one" "alice: reads through the allowed template"
same_error alice resources/read '{"uri":"memo://one"}' '{"uri":"nothing://one"}' memo://one nothing://one \
	"alice: reading through a hidden template fails like an unknown uri"
as bob 15 resources/read '{"uri":"memo://one"}'
is "$(jqr '.result.contents[0] | .text // (.blob | @base64d)')" "note one" "bob: reads through memo://{id}"
same_error alice completion/complete \
	'{"ref":{"type":"ref/resource","uri":"memo://{id}"},"argument":{"name":"id","value":"o"}}' \
	'{"ref":{"type":"ref/resource","uri":"nothing://{id}"},"argument":{"name":"id","value":"o"}}' \
	'memo://{id}' 'nothing://{id}' "alice: completion of a hidden template fails like an unknown one"
as alice 16 completion/complete '{"ref":{"type":"ref/resource","uri":"notes://{id}"},"argument":{"name":"id","value":"o"}}'
is "$(jqr '.result.completion.values | @json')" '["one"]' "alice: completion of the allowed template"

# ---- skills: a parent grants its nested skills
as alice 17 skills/list '{}'
is "$(jqr '[.result.skills[].frontmatter.name] | sort | @json')" '["partial-refunds","refunds"]' \
	"alice: skills/list shows refunds and its nested partial-refunds"
is "$(jqr .result.cacheScope)" private "alice: skills/list is private"
as bob 18 skills/list '{}'
is "$(jqr '.result.skills | length > 2')" true "bob: skills/list shows every skill"
as alice 19 skills/get '{"uri":"skill://acme/billing/refunds/partial-refunds/SKILL.md"}'
is "$STATUS/$(jqr .result.skill.frontmatter.name)" 200/partial-refunds "alice: skills/get of the nested skill"
same_error alice skills/get '{"uri":"skill://git-workflow/SKILL.md"}' '{"uri":"skill://nosuch/SKILL.md"}' \
	skill://git-workflow/SKILL.md skill://nosuch/SKILL.md "alice: skills/get of a hidden skill fails like an unknown one"
as alice 20 resources/read '{"uri":"skill://acme/billing/refunds/SKILL.md"}'
like "$(jqr '.result.contents[0].text')" 'alice' "alice: her skill's template renders {{principal}}"
same_error alice resources/read '{"uri":"skill://git-workflow/SKILL.md"}' '{"uri":"skill://nosuch/SKILL.md"}' \
	skill://git-workflow/SKILL.md skill://nosuch/SKILL.md "alice: reading a hidden skill's file fails like a missing one"
as alice 21 resources/directory/read '{"uri":"skill://acme/billing/refunds"}'
is "$(jqr '[.result.resources[].name] | @json')" '["refunds","partial-refunds","templates"]' \
	"alice: directory read of her skill"
same_error alice resources/directory/read '{"uri":"skill://git-workflow"}' '{"uri":"skill://nosuch"}' \
	skill://git-workflow skill://nosuch "alice: directory read of a hidden skill fails like a missing one"
as carol 22 skills/list '{}'
is "$(jqr '.result.skills // [] | length')" 0 "carol: skills/list is empty (or absent)"

# ---- "*" in an allow-list grants every item of its kind (phantom.yaml(5))
! grep -q 'dave' "$T_DIR/t.out"
ok "-t passes an allow-list of \"*\""
as dave 23 tools/list '{}'
is "$(jqr '[.result.tools[].name] | sort | @json')" '["delete","search"]' 'dave (tools: ["*"]): every tool is listed'
is "$(jqr .result.cacheScope)" private "  and the list is still private (an allow-list is configured)"
as dave 24 tools/call '{"name":"delete","arguments":{}}'
is "$(jqr '.result.content[0].text')" ran "dave: a tool granted by \"*\" runs"
as dave 25 prompts/list '{}'
is "$(jqr '[.result.prompts[].name] | @json')" '["pub"]' "dave: his prompts list (no star) still restricts"
as bob 27 skills/list '{}'
b=$(jqr '.result.skills | length')
as dave 26 skills/list '{}'
is "$(jqr '.result.skills | length')" "$b" 'dave (skills: ["*"]): every skill, as bob sees them'
done_testing
