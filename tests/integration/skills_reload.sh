#!/bin/bash
# SIGHUP picks up added, removed and changed skills (the manifest and every
# skill directory are loaded again); a broken manifest on reload keeps the
# running skills; pagination of a large listing (phantom-behaviour §3.3
# case 42). Through nginx, with a master and two workers.
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"

S=$T_DIR/skills
mkdir -p "$S/alpha" "$S/beta"
skill_md() { printf -- '---\nname: %s\ndescription: %s\n---\n# %s\n' "$1" "$2" "$1"; }
skill_md alpha "First version" >"$S/alpha/SKILL.md"
skill_md beta "Beta" >"$S/beta/SKILL.md"
cat >"$S/manifest.yaml" <<'YAML'
skills:
  - {path: demo/alpha, dir: alpha, cache: {ttl_ms: 1000, scope: public}}
  - {path: demo/beta, dir: beta}
YAML
cat >"$T_DIR/phantom.yaml" <<'YAML'
server: { name: reload-test, version: "1.0" }
workers: 2
skills: { manifest: skills/manifest.yaml }
YAML
behind_nginx phantom_listen "$T_DIR/phantom.yaml"
listing() { mpost "$U" 1 skills/list "${1:-{\}}"; jqr '[.result.skills[].uri] | join(" ")'; }
# hup EXPECTED: SIGHUP, then wait (5 s) until every worker lists EXPECTED
hup() {
	kill -HUP "$PH_PID"
	for _ in $(seq 1 100); do
		local a b
		a=$(listing) b=$(listing)
		[ "$a" = "$1" ] && [ "$b" = "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

is "$(listing)" "skill://demo/alpha/SKILL.md skill://demo/beta/SKILL.md" "two skills at start"
mpost "$U" 2 skills/get '{"uri":"skill://demo/alpha/SKILL.md"}'
is "$(jqr .result.skill.frontmatter.description)" "First version" "alpha's first description"

# add gamma, remove beta, change alpha (its description and a new file)
mkdir -p "$S/gamma"
skill_md gamma "Added later" >"$S/gamma/SKILL.md"
skill_md alpha "Second version" >"$S/alpha/SKILL.md"
printf 'new file\n' >"$S/alpha/notes.md"
cat >"$S/manifest.yaml" <<'YAML'
skills:
  - {path: demo/alpha, dir: alpha, cache: {ttl_ms: 1000, scope: public}}
  - {path: demo/gamma, dir: gamma}
YAML
hup "skill://demo/alpha/SKILL.md skill://demo/gamma/SKILL.md"
ok "SIGHUP: gamma added, beta removed"
mpost "$U" 3 skills/get '{"uri":"skill://demo/beta/SKILL.md"}'
is "$(jqr .error.message)" "No skill is served at skill://demo/beta/SKILL.md" "a removed skill is no longer served"
mpost "$U" 4 skills/get '{"uri":"skill://demo/alpha/SKILL.md"}'
is "$(jqr .result.skill.frontmatter.description)" "Second version" "a changed skill has its new frontmatter"
is "$(jqr '[.result.skill.resources[].uri] | join(" ")')" \
	"skill://demo/alpha/SKILL.md skill://demo/alpha/notes.md" "and its new file"
mpost "$U" 5 resources/read '{"uri":"skill://demo/alpha/notes.md"}'
is "$(jqr '.result.contents[0].text')" "new file" "the new file is readable"

# a broken manifest: the reload fails and the running skills stay
printf 'skills:\n  - {path: demo/Bad_Name, dir: alpha}\n' >"$S/manifest.yaml"
"$PHANTOM" -c "$T_DIR/phantom.yaml" -t 2>"$T_DIR/t.out"
is "$?" 1 "phantom-fcgi -t fails on the broken manifest"
like "$(cat "$T_DIR/t.out")" "skills/manifest.yaml:2: skill path 'demo/Bad_Name'" "-t names the manifest file and line"
kill -HUP "$PH_PID"
sleep 0.5
is "$(listing)" "skill://demo/alpha/SKILL.md skill://demo/gamma/SKILL.md" "a failed reload keeps the running skills"
like "$(cat "$PH_LOG")" "reload failed" "and the log says the reload failed"

# 105 skills: pages of 100 with a stable cursor (42)
{
	echo "skills:"
	for i in $(seq -f '%03g' 1 105); do
		mkdir -p "$S/p$i"
		skill_md git-workflow "Skill $i" >"$S/p$i/SKILL.md"
		echo "  - {path: p$i/git-workflow, dir: p$i}"
	done
} >"$S/manifest.yaml"
kill -HUP "$PH_PID"
for _ in $(seq 1 100); do
	mpost "$U" 6 skills/list '{}'
	[ "$(jqr '.result.skills|length')" = 100 ] && break
	sleep 0.05
done
is "$(jqr '.result.skills|length')" 100 "42: the first page has 100 skills"
C=$(jqr .result.nextCursor)
like "$C" '.' "42: and a nextCursor"
P1=$(jqr '[.result.skills[].uri] | join(" ")')
mpost "$U" 7 skills/list "$(jq -nc --arg c "$C" '{cursor:$c}')"
is "$(jqr '(.result.skills|length|tostring) + " " + (.result|has("nextCursor")|tostring)')" "5 false" \
	"42: the second page has 5 and no nextCursor"
P2=$(jqr '[.result.skills[].uri] | join(" ")')
is "$(printf '%s %s' "$P1" "$P2" | tr ' ' '\n' | sort -u | wc -l)" 105 "42: 105 distinct skills over both pages"
mpost "$U" 8 skills/list "$(jq -nc --arg c "$C" '{cursor:$c}')"
is "$(jqr '[.result.skills[].uri] | join(" ")')" "$P2" "the cursor is stable (another worker, same page)"
mpost "$U" 9 skills/list '{"cursor":"bogus"}'
is "$(jqr '(.error.code|tostring) + " " + .error.message')" "-32602 Invalid cursor" "an invalid cursor is -32602"
mpost "$U" 10 skills/list '{}'
is "$(jqr '.result.skills|length')" 100 "still serving after an invalid cursor"
done_testing
