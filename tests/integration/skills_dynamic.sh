#!/bin/bash
# Dynamic skills through nginx: an exec handler writes a skill's files per
# request (phantom-behaviour §1.6, §3.3 case 4). Listed and got as
# "resources": "dynamic", read and listed as directories from the handler's
# answer; a handler saying "no skill" is not served, a failing one is -32603;
# a dynamic skill nested in a static one makes the parent dynamic.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"

S=$T_DIR/skills
cp -R "$top_srcdir/tests/fixtures/skills-dynamic" "$S"
chmod -R u+w "$S"
cat >"$T_DIR/phantom.yaml" <<'YAML'
server: { name: skills-dynamic-test, version: "1.0" }
workers: 2
skills: { manifest: skills/manifest.yaml }
YAML
behind_nginx phantom_listen "$T_DIR/phantom.yaml"

mpost "$U" 1 skills/list '{}'
is "$(jqc '[.result.skills[] | [.uri, (.resources|tostring)]]')" \
	'[["skill://reports/daily/SKILL.md","dynamic"],["skill://studies/7/live/SKILL.md","dynamic"],["skill://team/handbook/SKILL.md","dynamic"],["skill://team/handbook/oncall/SKILL.md","dynamic"]]' \
	"4: dynamic skills are listed with resources \"dynamic\"; none, broken and wrong are left out"
is "$(jqr '(.result.ttlMs|tostring) + " " + .result.cacheScope')" "0 private" "a page with skills left out is 0/private"
is "$(jqc '.result.skills[0].frontmatter')" '{"name":"daily","description":"Today'"'"'s report"}' \
	"the frontmatter comes from the SKILL.md the handler wrote"

get skill://reports/daily/SKILL.md
is "$(jqr '.result.skill.resources + " " + (.result.ttlMs|tostring) + " " + .result.cacheScope')" \
	"dynamic 5000 public" "skills/get of a dynamic skill: dynamic, with its cache hints"
rd skill://reports/daily/SKILL.md
is "$(jqr '.result.contents[0].text')" $'---\nname: daily\ndescription: Today\'s report\n---\n# Daily' \
	"resources/read serves the handler's SKILL.md"
rd skill://reports/daily/data/today.md
is "$(jqr '.result.contents[0].mimeType + " " + .result.contents[0].text')" "text/markdown Today" \
	"a file in a subdirectory"
rd skill://reports/daily/img.png
is "$(jqr '.result.contents[0].mimeType + " " + .result.contents[0].blob')" "image/png iVBORw0KGgo=" \
	"a blob file stays a blob"
rd skill://reports/daily/input.json
# sent as a blob, served as text: the bytes are UTF-8
IN=$(jqr '.result.contents[0].text')
is "$(printf '%s' "$IN" | jq -r '.kind + " " + .path + " " + .uri')" \
	"skill reports/daily skill://reports/daily/SKILL.md" "the handler gets kind, path and uri on stdin"
is "$(printf '%s' "$IN" | jq -c '[.arguments, (.principal // "none"), (.clientCapabilities|type)]')" '[{},"none","object"]' \
	"and arguments, principal and clientCapabilities"
rd skill://reports/daily/nope.md
is "$(jqr .error.code)" -32602 "a file the handler did not write is not found"
dread skill://reports/daily
is "$(jqc '[.result.resources[] | [.name, .mimeType]]')" \
	'[["daily","text/markdown"],["data","inode/directory"],["img.png","image/png"],["input.json","application/json"]]' \
	"directory read of a dynamic skill's root"
dread skill://reports/daily/data
is "$(jqc '[.result.resources[].uri]')" '["skill://reports/daily/data/today.md"]' "and of a subdirectory"

get skill://reports/none/SKILL.md
is "$(jqr .error.message)" "No skill is served at skill://reports/none/SKILL.md" \
	"a handler answering files: null serves no skill (-32602)"
rd skill://reports/none/SKILL.md
is "$(jqr .error.code)" -32602 "and nothing to read"
get skill://reports/broken/SKILL.md
is "$(jqr '(.error.code|tostring) + " " + .error.message')" "-32603 Internal error" "a failing handler is -32603"
sleep 0.2
like "$(cat "$PH_LOG")" "broken handler: database unreachable" "its stderr goes to the server log"
like "$(cat "$PH_LOG")" "broken.sh failed: exit status 3" "and so does how it ended"
get skill://reports/wrong/SKILL.md
is "$(jqr .error.code)" -32603 "a handler whose SKILL.md names another skill is -32603"
like "$(cat "$PH_LOG")" "skill reports/wrong: the frontmatter name differs" "and logged"
get skill://reports/daily/SKILL.md
is "$(jqr .result.skill.frontmatter.name)" daily "still serving after handler failures"

get skill://team/handbook/SKILL.md
is "$(jqr '.result.skill.resources + " " + (.result.ttlMs|tostring)')" "dynamic 0" \
	"a static skill with a dynamic nested skill is dynamic (hints combined)"
dread skill://team/handbook
is "$(jqc '[.result.resources[] | [.name, .mimeType]]')" \
	'[["handbook","text/markdown"],["oncall","inode/directory"],["values.md","text/markdown"]]' \
	"the parent's listing shows the dynamic skill's folder"
dread skill://team/handbook/oncall
is "$(jqc '[.result.resources[].name]')" '["oncall","rota.md"]' "which reads as the dynamic skill's root"
rd skill://team/handbook/oncall/rota.md
is "$(jqr '.result.contents[0].text')" "Ada this week" "a nested dynamic skill's file"
rd skill://team/handbook/values.md
is "$(jqr '.result.contents[0].text')" "Be kind." "the parent's own files are static"

rd skill://studies/7/live/SKILL.md
like "$(jqr '.result.contents[0].text')" '# Study 7' "a dynamic skill gets its path parameters (listed value)"
get skill://studies/123/live/SKILL.md
is "$(jqr .result.skill.uri)" skill://studies/123/live/SKILL.md "and any value matching the pattern"
rd skill://studies/123/live/SKILL.md
like "$(jqr '.result.contents[0].text')" '# Study 123' "rendered by the handler for that value"
get skill://studies/x1/live/SKILL.md
is "$(jqr .error.code)" -32602 "a value outside the pattern is not served"
done_testing
