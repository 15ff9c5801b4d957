#!/bin/bash
# A parameterised skill listed by a handler (manifest list: {exec: ...}):
# skills/list shows, per principal, the parameter sets the handler returns,
# each entry built as skills/get builds it; bad items are logged and
# skipped; a failing handler is -32603 and the server serves on. The
# SKILL.md of each listed parameter set is in resources/list too (name and
# description from its frontmatter, per principal, under the skill
# allow-lists). Behind nginx.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"

bearer_token T_A H_A; bearer_token T_B H_B; bearer_token T_C H_C; bearer_token T_D H_D
S=$T_DIR/skills
mkdir -p "$S/study-review" "$S/git-workflow"
printf -- '---\nname: study-review\ndescription: Review a study.\n---\nStudy {{study_id}} for {{principal}}.\n' \
	>"$S/study-review/SKILL.md.tmpl"
printf -- '---\nname: git-workflow\ndescription: Git.\n---\nBranch.\n' >"$S/git-workflow/SKILL.md"
cat >"$S/studies.sh" <<'SH'
#!/bin/bash
in=$(cat)
printf '%s\n' "$in" >>"$(dirname "$0")/list.in"
case $(jq -r .principal <<<"$in") in
alice) echo '{"list":["42",{"study_id":"7"},"no/slash","abc",{"other":"1"},5]}' ;;
bob) echo '{"list":[{"study_id":"1001"}]}' ;;
*) exit 4 ;;
esac
SH
chmod 755 "$S/studies.sh"
cat >"$S/manifest.yaml" <<'YAML'
skills:
  - path: git-workflow
    dir: git-workflow
    cache: {ttl_ms: 300000, scope: public}
  - path: studies/:study_id/study-review
    dir: study-review
    params:
      study_id: {pattern: "[0-9]+"}
    list: { exec: [./studies.sh], timeout_ms: 2000 }
YAML
test_conf "$T_DIR/phantom.yaml" skill-list-test 'workers: 2' "skills: { manifest: $S/manifest.yaml }" \
	'auth:' '  mode: bearer' \
	"  tokens: [ { principal: alice, sha256: $H_A }, { principal: bob, sha256: $H_B }," \
	"            { principal: carol, sha256: $H_C }, { principal: dave, sha256: $H_D } ]" \
	'  allow: { dave: { skills: [git-workflow] } }'
"$PHANTOM" -c "$T_DIR/phantom.yaml" -t >"$T_DIR/t.out" 2>&1; ok "a manifest with list: {exec} loads (-t)"
sed 's/^/#   /' "$T_DIR/t.out"
phantom_unix "$T_DIR/phantom.yaml" || { echo "not ok - phantom starts"; exit 1; }
nginx_start "$PH_BACKEND" || { echo "not ok - nginx starts"; exit 1; }
U=$NGINX_URL

mpost "$U" 1 skills/list '{}' -H "Authorization: Bearer $T_A"
is "$(jqr '[.result.skills[].uri]|@json')" \
	'["skill://git-workflow/SKILL.md","skill://studies/42/study-review/SKILL.md","skill://studies/7/study-review/SKILL.md"]' \
	"alice: the configured skill, then the handler's two good parameter sets"
is "$(jqr '.result.skills[1].frontmatter.description')" "Review a study." "an entry is built like skills/get"
is "$(jqr '.result.skills[1].resources[0].uri')" skill://studies/42/study-review/SKILL.md "... with its files and digests"
like "$(jqr '.result.skills[1].resources[0].digest')" '^sha256:[0-9a-f]{64}$' "... a sha256 digest"
is "$(jqr '.result.ttlMs')/$(jqr '.result.cacheScope')" 0/private "a per-principal listing is not reusable (ttlMs 0, private)"
mpost "$U" 2 skills/get '{"uri":"skill://studies/42/study-review/SKILL.md"}' -H "Authorization: Bearer $T_A"
is "$(jqr '.result.skill.resources[0].digest')" "$(mpost "$U" 1 skills/list '{}' -H "Authorization: Bearer $T_A"; jqr '.result.skills[1].resources[0].digest')" \
	"the listed entry equals skills/get's"
is "$(grep -c 'skill studies/:study_id/study-review: list: item [0-9]* skipped' "$PH_LOG")" 8 \
	"the four bad items are logged and skipped (both lists)"
mpost "$U" 3 skills/list '{}' -H "Authorization: Bearer $T_B"
is "$(jqr '[.result.skills[].uri]|@json')" \
	'["skill://git-workflow/SKILL.md","skill://studies/1001/study-review/SKILL.md"]' "bob: his own parameter set"
is "$(tail -1 "$S/list.in" | jq -c '{kind, name, principal}')" \
	'{"kind":"skill_list","name":"studies/:study_id/study-review","principal":"bob"}' \
	"the handler gets {kind: skill_list, name: the path, principal, ...}"
mpost "$U" 4 skills/list '{}' -H "Authorization: Bearer $T_C"
is "$(jqr .error.code)" -32603 "a failing list handler: -32603"
mpost "$U" 5 skills/list '{}' -H "Authorization: Bearer $T_B"
is "$STATUS/$(jqr '.result.skills|length')" 200/2 "the next request is served"

# the SKILL.md of each listed parameter set in resources/list
mpost "$U" 6 resources/list '{}' -H "Authorization: Bearer $T_A"
is "$(jqr '[.result.resources[].uri]|@json')" \
	'["skill://git-workflow/SKILL.md","skill://studies/42/study-review/SKILL.md","skill://studies/7/study-review/SKILL.md"]' \
	"resources/list for alice: every listed SKILL.md, the handler's parameter sets included"
is "$(jqr '.result.resources[1]|[.name, .description, .mimeType]|@json')" '["study-review","Review a study.","text/markdown"]' \
	"a handler-listed SKILL.md is named and described by its frontmatter"
is "$(jqr '.result.ttlMs')/$(jqr '.result.cacheScope')" 0/private "that page is per principal (ttlMs 0, private)"
mpost "$U" 7 resources/read '{"uri":"skill://studies/7/study-review/SKILL.md"}' -H "Authorization: Bearer $T_A"
like "$(jqr '.result.contents[0].text')" "Study 7 for alice\." "the listed uri reads"
mpost "$U" 8 resources/list '{}' -H "Authorization: Bearer $T_B"
is "$(jqr '[.result.resources[].uri]|@json')" \
	'["skill://git-workflow/SKILL.md","skill://studies/1001/study-review/SKILL.md"]' "resources/list for bob: his own"
n_in=$(wc -l <"$S/list.in")
mpost "$U" 9 resources/list '{}' -H "Authorization: Bearer $T_D"
is "$STATUS/$(jqr '[.result.resources[].uri]|@json')" '200/["skill://git-workflow/SKILL.md"]' \
	"dave, allowed git-workflow only: no parameter set listed"
is "$(wc -l <"$S/list.in")" "$n_in" "... and the list handler is not even asked for him"
mpost "$U" 12 resources/list '{}' -H "Authorization: Bearer $T_C"
is "$STATUS/$(jqr .error.code)" 200/-32603 "resources/list with a failing list handler: -32603"
mpost "$U" 13 resources/list '{}' -H "Authorization: Bearer $T_B"
is "$STATUS/$(jqr '.result.resources|length')" 200/2 "the next request is served"

# stdio: the principal is auth.stdio_principal
for who in alice bob; do
	test_conf "$T_DIR/stdio-$who.yaml" skill-list-test "skills: { manifest: $S/manifest.yaml }" \
		"auth: { stdio_principal: $who }"
	{ req 1 skills/list; echo; req 2 resources/list; echo; } |
		"$PHANTOM" -c "$T_DIR/stdio-$who.yaml" --stdio >"$T_DIR/stdio-$who.out" 2>>"$T_DIR/stdio.err"
done
is "$(sed -n 1p "$T_DIR/stdio-alice.out" | jq -c '[.result.skills[].uri]')" \
	'["skill://git-workflow/SKILL.md","skill://studies/42/study-review/SKILL.md","skill://studies/7/study-review/SKILL.md"]' \
	"stdio as alice: skills/list holds her parameter sets"
is "$(sed -n 2p "$T_DIR/stdio-alice.out" | jq -c '[.result.resources[].uri]')" \
	'["skill://git-workflow/SKILL.md","skill://studies/42/study-review/SKILL.md","skill://studies/7/study-review/SKILL.md"]' \
	"stdio as alice: so does resources/list"
is "$(sed -n 1p "$T_DIR/stdio-bob.out" | jq -c '[.result.skills[].uri]')/$(sed -n 2p "$T_DIR/stdio-bob.out" | jq -c '[.result.resources[].uri]')" \
	'["skill://git-workflow/SKILL.md","skill://studies/1001/study-review/SKILL.md"]/["skill://git-workflow/SKILL.md","skill://studies/1001/study-review/SKILL.md"]' \
	"stdio as bob: his own, in both lists"
done_testing
