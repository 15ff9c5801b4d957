#!/bin/bash
# Links planted after start-up, pointing outside a configured root, behind
# the real nginx: a file resource's file, a file and a directory in a
# resource template's directory, a file and a directory in a skill, and a
# skill's SKILL.md. Every reading path (resources/read of the resource, of
# the template and of skill:// files, skills/get, resources/directory/read)
# refuses them, never serves the secret they point at, and the server
# answers the next request. (tests/unit/test_fs.c checks the same opens
# with openat2 and with the walk that replaces it.)
. "${top_srcdir:-.}/tests/lib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
command -v jq >/dev/null || skip_all "jq not installed"

SECRET="the-secret-$RANDOM$RANDOM"
O=$T_DIR/outside
mkdir -p "$O/docs" "$T_DIR/res" "$T_DIR/tpl/sub" "$T_DIR/skills/kit/docs"
printf '%s\n' "$SECRET" >"$O/secret.txt"
printf '%s\n' "$SECRET" >"$O/guide.md"
printf '%s\n' "$SECRET" >"$O/docs/guide.md"
printf -- '---\nname: "kit"\ndescription: "%s"\n---\n# kit\n' "$SECRET" >"$O/SKILL.md"
printf 'resource file\n' >"$T_DIR/res/note.txt"
printf 'template file\n' >"$T_DIR/tpl/page.txt"
printf 'template nested\n' >"$T_DIR/tpl/sub/inner.txt"
printf -- '---\nname: "kit"\ndescription: "A kit"\n---\n# Kit\n' >"$T_DIR/skills/kit/SKILL.md"
printf '# Notes\n' >"$T_DIR/skills/kit/notes.md"
printf '# Guide\n' >"$T_DIR/skills/kit/docs/guide.md"
cat >"$T_DIR/skills/manifest.yaml" <<'YAML'
skills:
  - {path: kit, dir: kit}
YAML
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: fs-test, version: "1.0" }
workers: 2
skills: { manifest: skills/manifest.yaml }
resources:
  - {uri: "info://note", name: note, file: res/note.txt}
resource_templates:
  items:
    - {uri_template: "files://{name}", name: files, dir: tpl}
    - {uri_template: "deep://{dir}/{name}", name: deep, dir: tpl}
YAML
behind_nginx phantom_listen "$T_DIR/phantom.yaml"

# no_secret WHAT: the last answer does not hold the secret
no_secret() {
	case $BODY in
	*"$SECRET"*) false ;;
	esac
	ok "$1"
}
# refused WHAT: the last answer is an error naming the URI (-32602, resource
# not found), holds no secret, and the next request is served
refused() {
	is "$STATUS/$(jqr .error.code)" 200/-32602 "$1: refused as not found (-32602)"
	[ "$(jqr .error.message)" != "null" ]; ok "$1: the error says what was refused: $(jqr .error.message)"
	no_secret "$1: the secret is not in the answer"
	still_serving "$U" "$1"
}

# ---- before: everything legitimate is served ---------------------------------------
rd info://note
is "$(jqr '.result.contents[0].text')" "resource file" "the file resource is served"
rd files://page.txt
is "$(jqr '.result.contents[0].text')" "template file" "a file of the template directory is served"
rd deep://sub/inner.txt
is "$(jqr '.result.contents[0].text')" "template nested" "a file in a subdirectory of the template directory is served"
rd skill://kit/notes.md
is "$(jqr '.result.contents[0].text')" "# Notes" "a skill file is served"
rd skill://kit/docs/guide.md
is "$(jqr '.result.contents[0].text')" "# Guide" "a skill file in a subdirectory is served"
mpost "$U" 9 resources/directory/read "$(uri skill://kit/docs)"
is "$(jqr '[.result.resources[].uri] | join(" ")')" "skill://kit/docs/guide.md" "the skill's subdirectory lists"

# ---- plant the links, with the server running -------------------------------------
mv "$T_DIR/res/note.txt" "$T_DIR/note.saved"
ln -s ../outside/secret.txt "$T_DIR/res/note.txt"
ln -s ../outside/secret.txt "$T_DIR/tpl/planted.txt"
ln -s "$O/secret.txt" "$T_DIR/tpl/absolute.txt"
ln -s ../outside "$T_DIR/tpl/linkdir"
ln -s ../../outside/secret.txt "$T_DIR/tpl/sub/up.txt"
mv "$T_DIR/skills/kit/notes.md" "$T_DIR/notes.saved"
ln -s ../../outside/secret.txt "$T_DIR/skills/kit/notes.md"
mv "$T_DIR/skills/kit/docs" "$T_DIR/docs.saved"
ln -s "$O/docs" "$T_DIR/skills/kit/docs"

# ---- file resource: read once at start-up, never through the new link -------------
rd info://note
is "$(jqr '.result.contents[0].text')" "resource file" \
	"the file resource still serves what was read at start-up, not the link's target"
no_secret "the file resource: the secret is not in the answer"

# ---- template directory --------------------------------------------------------------
rd files://planted.txt
refused "a template file linked outside (relative link)"
rd files://absolute.txt
refused "a template file linked outside (absolute link)"
rd deep://linkdir/secret.txt
refused "a template subdirectory linked outside"
rd deep://sub/up.txt
refused "a link two levels up out of the template directory"
rd files://page.txt
is "$(jqr '.result.contents[0].text')" "template file" "the template's own files are still served"
grep -q "files://planted.txt.*leads outside the directory" "$PH_LOG"
ok "the log says why the template file was refused"

# ---- skill files -----------------------------------------------------------------------
rd skill://kit/notes.md
refused "a skill file swapped for a link outside"
rd skill://kit/docs/guide.md
refused "a skill directory swapped for a link outside"
mpost "$U" 7 skills/get "$(uri skill://kit/SKILL.md)"
is "$(jqr '[.result.skill.resources[].uri] | join(" ")')" "skill://kit/SKILL.md" \
	"skills/get lists neither file behind a link outside"
grep -q "notes.md is not served: it leads outside the directory" "$PH_LOG"
ok "the log says why the skill file was not served"
no_secret "skills/get: the secret is not in the answer"

# ---- directory reads -------------------------------------------------------------------
mpost "$U" 9 resources/directory/read "$(uri skill://kit/docs)"
[ "$(jqr '[.result.resources[]?.uri] | map(select(test("secret"))) | length')" = 0 ]; ok "directory/read of a directory swapped for a link outside lists nothing from outside"
no_secret "directory/read: the secret is not in the answer"
for u in $(jqr '.result.resources[]?.uri'); do
	rd "$u"
	refused "what directory/read lists below the link ($u)"
done
still_serving "$U" "directory reads below a link"

# ---- SKILL.md itself swapped for a link outside ----------------------------------------
mv "$T_DIR/skills/kit/SKILL.md" "$T_DIR/SKILL.saved"
ln -s ../../outside/SKILL.md "$T_DIR/skills/kit/SKILL.md"
rd skill://kit/SKILL.md
refused "SKILL.md swapped for a link outside"
mpost "$U" 9 resources/directory/read "$(uri skill://kit)"
is "$STATUS/$(jqr .error.code)" 200/-32602 "directory/read of a skill whose SKILL.md links outside: -32602"
like "$(jqr .error.message)" "is not a directory resource" "... saying it is not a directory resource"
no_secret "... and the secret is not in the answer"
mpost "$U" 2 skills/list '{}'
is "$(jqr '.result.skills | length')" 0 "skills/list no longer lists the skill"
no_secret "skills/list: the secret (its description) is not in the answer"
still_serving "$U" "SKILL.md linked outside"

# ---- restored: served again --------------------------------------------------------------
rm "$T_DIR/skills/kit/SKILL.md" "$T_DIR/skills/kit/notes.md" "$T_DIR/skills/kit/docs"
mv "$T_DIR/SKILL.saved" "$T_DIR/skills/kit/SKILL.md"
mv "$T_DIR/notes.saved" "$T_DIR/skills/kit/notes.md"
mv "$T_DIR/docs.saved" "$T_DIR/skills/kit/docs"
rd skill://kit/notes.md
is "$(jqr '.result.contents[0].text')" "# Notes" "the skill file restored is served again"
rd skill://kit/docs/guide.md
is "$(jqr '.result.contents[0].text')" "# Guide" "the skill directory restored is served again"
mpost "$U" 9 resources/directory/read "$(uri skill://kit)"
is "$(jqr '[.result.resources[].uri] | join(" ")')" "skill://kit/SKILL.md skill://kit/docs skill://kit/notes.md" \
	"the skill directory lists again"
done_testing
