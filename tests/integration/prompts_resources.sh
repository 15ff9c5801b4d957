#!/bin/bash
# Prompts, resources, resource templates and completion through the real
# nginx: lists (order, pages, cache hints), prompts/get with substitution,
# embedded resources and handlers, resources/read as text or blob,
# directory-backed templates that refuse every way out of their directory,
# handler-backed resources, completion, and capabilities.
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"

D=$T_DIR/files
mkdir -p "$D/sub" "$T_DIR/outside"
printf 'hello notes\n' >"$D/notes.txt"
printf '{"a":1}' >"$D/data.json"
printf '# Title\n' >"$D/readme.md"
printf '\x89PNG\r\n\x1a\n\0\0' >"$D/pic.png"
printf 'caf\xe9 latin-1\n' >"$D/latin1.txt"
printf 'no extension' >"$D/plain"
printf 'hidden' >"$D/.secret"
printf 'nested' >"$D/sub/inner.txt"
printf 'outside secret' >"$T_DIR/outside/secret.txt"
ln -s ../outside/secret.txt "$D/escape.txt"
ln -s notes.txt "$D/inside-link.txt"
ln -s /etc/passwd "$D/passwd"
mkfifo "$D/fifo"
head -c 3000 /dev/zero >"$D/big.bin"

mkdir -p "$T_DIR/bin"
cat >"$T_DIR/bin/prompt.sh" <<'EOF'
#!/bin/sh
read -r req
topic=$(printf '%s' "$req" | sed -n 's/.*"topic":"\([^"]*\)".*/\1/p')
printf '{"description":"from a script","messages":[{"role":"user","content":{"type":"text","text":"Tell me about %s"}}]}\n' "$topic"
EOF
cat >"$T_DIR/bin/res.sh" <<'EOF'
#!/bin/sh
read -r req
case $req in
*'"id":"missing"'*) echo '{"contents":[]}' ;;
*'"id":"broken"'*) echo 'broken' ;;
*) uri=$(printf '%s' "$req" | sed -n 's/.*"uri":"\([^"]*\)".*/\1/p')
   printf '{"contents":[{"uri":"%s","mimeType":"text/plain","text":"generated for %s"}]}\n' "$uri" "$uri" ;;
esac
EOF
cat >"$T_DIR/bin/complete.sh" <<'EOF'
#!/bin/sh
read -r req
printf '%s' "$req" >"$1"
echo '{"values":["red","green","blue"],"total":7,"hasMore":true}'
EOF
chmod +x "$T_DIR/bin/"*.sh

cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: pr-test, version: "1.0", page_size: 2, ttl_ms: 5, scope: private }
workers: 2
limits: { resource_bytes: 2048, completion_values: 5 }
prompts:
  ttl_ms: 777
  items:
    - name: review
      title: Code review
      description: Review some code
      arguments:
        - {name: code, description: The code, required: true}
        - {name: language, complete: [python, perl, php, pascal, prolog, powershell, rust]}
      messages:
        - {role: user, text: "Review this {{ language }} code:\n{{code}} {{unknown}}"}
        - {role: assistant, text: "Sure."}
    - name: embed
      arguments: [{name: file, required: true}]
      messages:
        - {resource: "files://{{file}}"}
    - name: scripted
      arguments: [{name: topic, complete: {exec: [$T_DIR/bin/complete.sh, $T_DIR/complete.in]}}]
      exec: [$T_DIR/bin/prompt.sh]
    - name: module_prompt
      arguments: [{name: topic}]
      module: testmod.so
      symbol: prompt
    - name: picture
      messages:
        - {role: user, image: files/pic.png}
resources:
  - {uri: "info://inline", name: inline, text: "inline text", ttl_ms: 60000, scope: public}
  - {uri: "info://json", name: json, file: files/data.json}
  - {uri: "info://pic", name: pic, file: files/pic.png, description: A picture}
  - {uri: "info://latin1", name: latin1, file: files/latin1.txt}
  - {uri: "info://generated", name: generated, exec: [$T_DIR/bin/res.sh]}
resource_templates:
  ttl_ms: 4242
  scope: public
  items:
    - uri_template: "files://{name}"
      name: files
      dir: files
      complete: {name: [notes.txt, data.json, readme.md]}
    - uri_template: "deep://{dir}/{name}"
      name: deep
      dir: files
    - uri_template: "gen://{id}"
      name: gen
      exec: [$T_DIR/bin/res.sh]
      ttl_ms: 1
    - uri_template: "mod://items/{id}"
      name: mod
      module: testmod.so
      symbol: resource
      complete: {id: {module: testmod.so, symbol: many_values}}
YAML
behind_nginx phantom_up "$T_DIR/phantom.yaml"

still() {
	mcall "$U" 99 resources/read '{"uri":"info://inline"}'
	is "$STATUS/$(jqr '.result.contents[0].text')" "200/inline text" "the next request after $1 still succeeds"
}
read_uri() { mcall "$U" "$1" resources/read "{\"uri\":\"$2\"}"; }

# ---- capabilities ------------------------------------------------------------
mcall "$U" 1 server/discover '{}'
is "$(jqr '.result.capabilities|[has("prompts"),has("resources"),has("completions"),has("tools")]|map(tostring)|join(",")')" \
	"true,true,true,false" "discover: prompts, resources and completions, no tools (none configured)"
mcall "$U" 2 tools/list '{}'
is "$STATUS/$(jqr .error.code)" "404/-32601" "methods of an unconfigured feature: 404 -32601"
lcall "$U" 3 tools/call '{"name":"x"}'
is "$(jqr .error.code)" -32601 "... also for legacy requests"

# ---- prompts -----------------------------------------------------------------
mcall "$U" 10 prompts/list '{}'
is "$(jqr '[.result.prompts[].name]|join(",")')" "review,embed" "prompts in configuration order, page_size 2"
is "$(jqr '.result.prompts[0].arguments|map("\(.name)=\(.required)")|join(",")')" "code=true,language=false" "arguments with required"
is "$(jqr .result.prompts[0].title)" "Code review" "title"
is "$(jqr .result.ttlMs)/$(jqr .result.cacheScope)" "777/private" "the prompts list has its own ttl, the server's scope"
mcall "$U" 11 prompts/list "{\"cursor\":\"$(jqr .result.nextCursor)\"}"
is "$(jqr '[.result.prompts[].name]|join(",")')" "scripted,module_prompt" "page two"
mcall "$U" 12 prompts/get '{"name":"review","arguments":{"code":"x = 1","language":"python"}}'
is "$(jqr '.result.messages[0].content.text')" "Review this python code:
x = 1 {{unknown}}" "arguments substituted, unknown placeholders left alone"
is "$(jqr '.result.messages[1].role')" assistant "roles kept"
is "$(jqr .result.description)" "Review some code" "description"
is "$(jqr '.result.ttlMs // "none"')" none "prompts/get is not cacheable"
mcall "$U" 13 prompts/get '{"name":"review","arguments":{"code":"y"}}'
is "$(jqr '.result.messages[0].content.text')" "Review this  code:
y {{unknown}}" "an optional argument not given becomes empty"
mcall "$U" 14 prompts/get '{"name":"review","arguments":{}}'
is "$STATUS/$(jqr .error.code)" "200/-32602" "a missing required argument: -32602"
like "$(jqr .error.message)" "Missing required argument: code" "... naming it"
mcall "$U" 15 prompts/get '{"name":"nope"}'
is "$(jqr .error.code)" -32602 "an unknown prompt: -32602"
mcall "$U" 16 prompts/get '{"name":"review","arguments":{"code":1}}'
is "$(jqr .error.code)" -32602 "a non-string argument: -32602"
mcall "$U" 17 prompts/get '{"name":"embed","arguments":{"file":"notes.txt"}}'
is "$(jqr '.result.messages[0].content.type')/$(jqr '.result.messages[0].content.resource.text')" \
	"resource/hello notes" "an embedded resource by uri, with the argument substituted"
mcall "$U" 18 prompts/get '{"name":"embed","arguments":{"file":"..%2Fphantom.yaml"}}'
is "$(jqr .error.code)" -32602 "an embedded uri that is not a resource: -32602"
mcall "$U" 19 prompts/get '{"name":"scripted","arguments":{"topic":"owls"}}'
is "$(jqr '.result.messages[0].content.text')/$(jqr .result.description)" "Tell me about owls/from a script" "an exec prompt handler"
mcall "$U" 20 prompts/get '{"name":"module_prompt","arguments":{"topic":"C"}}'
is "$(jqr '[.result.messages[]|"\(.role):\(.content.text)"]|join("|")')" "user:Topic: C|assistant:Understood." "a module prompt handler"
is "$(jqr .result.description)" "from the module" "... with its description"
mcall "$U" 21 prompts/get '{"name":"picture"}'
is "$(jqr '.result.messages[0].content.type')/$(jqr '.result.messages[0].content.mimeType')" "image/image/png" "an image from a file"
is "$(jqr '.result.messages[0].content.data')" "$(base64 -w0 <"$D/pic.png")" "its bytes, base64"
still "prompt errors"

# ---- resources/list and templates/list ----------------------------------------
mcall "$U" 30 resources/list '{}'
is "$(jqr '[.result.resources[].uri]|join(",")')" "info://inline,info://json" "resources in configuration order"
is "$(jqr '.result.resources[1].mimeType')/$(jqr '.result.resources[1].size')" "application/json/7" "mimeType guessed, size in bytes"
is "$(jqr .result.ttlMs)/$(jqr .result.cacheScope)" "5/private" "the server's hints when the list has none"
mcall "$U" 31 resources/list "{\"cursor\":\"$(jqr .result.nextCursor)\"}"
is "$(jqr '[.result.resources[].uri]|join(",")')" "info://pic,info://latin1" "page two"
mcall "$U" 32 resources/templates/list '{}'
is "$(jqr '[.result.resourceTemplates[].uriTemplate]|join(",")')" "files://{name},deep://{dir}/{name}" "templates"
is "$(jqr .result.ttlMs)/$(jqr .result.cacheScope)" "4242/public" "the templates list's own hints"

# ---- resources/read -------------------------------------------------------------
read_uri 40 info://inline
is "$(jqr '.result.contents[0].text')/$(jqr '.result.contents[0].mimeType')" "inline text/text/plain" "inline text"
is "$(jqr .result.ttlMs)/$(jqr .result.cacheScope)" "60000/public" "a resource's own cache hints"
read_uri 41 info://json
is "$(jqr '.result.contents[0].text')" '{"a":1}' "a JSON file is text"
read_uri 42 info://pic
is "$(jqr '.result.contents[0].blob')/$(jqr '.result.contents[0].mimeType')" "$(base64 -w0 <"$D/pic.png")/image/png" "an image is a base64 blob"
is "$(jqr '.result.contents[0].text // "none"')" none "... never text"
read_uri 43 info://latin1
is "$(jqr '.result.contents[0].blob')" "$(base64 -w0 <"$D/latin1.txt")" "text/plain that is not UTF-8 is a blob"
read_uri 44 info://generated
is "$(jqr '.result.contents[0].text')" "generated for info://generated" "a resource answered by an exec handler"
read_uri 45 files://notes.txt
is "$(jqr '.result.contents[0].text|rtrimstr("\n")')/$(jqr '.result.contents[0].mimeType')" "hello notes/text/plain" "a directory-backed template"
is "$(jqr .result.ttlMs)/$(jqr .result.cacheScope)" "4242/public" "... with its section's hints"
read_uri 46 files://readme.md
is "$(jqr '.result.contents[0].mimeType')" text/markdown "mimeType from the extension"
read_uri 47 files://plain
is "$(jqr '.result.contents[0].mimeType')/$(jqr '.result.contents[0].blob')" "application/octet-stream/$(printf 'no extension' | base64)" "unknown extension: octet-stream blob"
read_uri 48 files://inside-link.txt
is "$(jqr '.result.contents[0].text')" "hello notes" "a symlink that stays inside is followed"
read_uri 49 deep://sub/inner.txt
is "$(jqr '.result.contents[0].text')" nested "two variables map to a subdirectory"
read_uri 50 files://big.bin
is "$(jqr .error.code)" -32603 "a file over limits.resource_bytes: internal error"
still "a file too large"

for u in 'files://..' 'files://..%2Fphantom.yaml' 'files://%2e%2e%2fphantom.yaml' 'files://%2Fetc%2Fpasswd' \
	'files://escape.txt' 'files://passwd' 'files://.secret' 'files://sub' 'files://fifo' 'files://nothere' \
	'files://notes.txt%00.png' 'files://a%5C..%5Cb' 'deep://..%2F../secret.txt' 'deep://%2E%2E/outside' \
	'files://notes.txt/..' 'files:///etc/passwd' 'unknown://x'; do
	read_uri 60 "$u"
	is "$STATUS/$(jqr .error.code)/$(jqr .error.data.uri)" "200/-32602/$u" "not found (-32602, data.uri): $u"
done
[ "$(grep -c 'outside secret' <<<"$BODY")" = 0 ]; ok "nothing outside the directory was served"
lcall "$U" 61 resources/read '{"uri":"files://nothere"}'
is "$(jqr .error.code)" -32002 "legacy clients get -32002 for a missing resource"
read_uri 62 gen://abc
is "$(jqr '.result.contents[0].text')/$(jqr .result.ttlMs)" "generated for gen://abc/1" "an exec-backed template, its own ttl"
read_uri 63 gen://missing
is "$(jqr .error.code)" -32602 "a handler with empty contents means not found"
read_uri 64 gen://broken
is "$(jqr .error.code)" -32603 "a handler that fails: -32603"
grep -q "resource gen://broken: .* did not write one JSON object" "$PH_LOG"; ok "the failure is logged"
read_uri 65 "mod://items/42"
is "$(jqr '.result.contents[0].text')" "item 42 at mod://items/42" "a module-backed template gets its variables"
read_uri 66 "mod://items/missing"
is "$(jqr .error.code)" -32602 "a module can say not found"
read_uri 67 "mod://items/fail"
is "$(jqr .error.code)" -32603 "a module returning NULL: -32603"
still "resource errors"

# ---- completion ------------------------------------------------------------------
comp() { mcall "$U" "$1" completion/complete "$2"; }
comp 70 '{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"language","value":"p"}}'
is "$(jqr '.result.completion.values|join(",")')" "python,perl,php,pascal,prolog" "static values filtered by prefix, at most limits.completion_values"
is "$(jqr .result.completion.total)/$(jqr .result.completion.hasMore)" "6/true" "total and hasMore"
comp 71 '{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"language","value":"RU"}}'
is "$(jqr '.result.completion.values|join(",")')/$(jqr .result.completion.hasMore)" "rust/false" "prefix match ignores case"
comp 72 '{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"code","value":""}}'
is "$(jqr '.result.completion.values|length')/$(jqr .result.completion.hasMore)" "0/false" "an argument without completion: no values"
comp 73 '{"ref":{"type":"ref/prompt","name":"scripted"},"argument":{"name":"topic","value":"gr"},"context":{"arguments":{"other":"x"}}}'
is "$(jqr '.result.completion.values|join(",")')/$(jqr .result.completion.total)/$(jqr .result.completion.hasMore)" "red,green,blue/7/true" "an exec completion handler"
is "$(jq -r '"\(.kind) \(.argument.name)=\(.argument.value) \(.ref.name) \(.arguments.other)"' "$T_DIR/complete.in")" \
	"completion topic=gr scripted x" "the handler gets ref, argument and context"
comp 74 '{"ref":{"type":"ref/resource","uri":"files://{name}"},"argument":{"name":"name","value":"n"}}'
is "$(jqr '.result.completion.values|join(",")')" "notes.txt" "a template variable"
comp 75 '{"ref":{"type":"ref/resource","uri":"mod://items/{id}"},"argument":{"name":"id","value":"x"}}'
is "$(jqr '.result.completion.values|length')/$(jqr .result.completion.total)/$(jqr .result.completion.hasMore)" "5/150/true" \
	"a module handler's 150 values are cut to the limit"
comp 76 '{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""}}'
is "$(jqr .error.code)" -32602 "an unknown prompt: -32602"
comp 77 '{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"nope","value":""}}'
is "$(jqr .error.code)" -32602 "an unknown argument: -32602"
comp 78 '{"ref":{"type":"ref/resource","uri":"nope://{x}"},"argument":{"name":"x","value":""}}'
is "$(jqr .error.code)" -32602 "an unknown template: -32602"
comp 79 '{"ref":{"type":"ref/resource","uri":"info://inline"},"argument":{"name":"x","value":""}}'
is "$(jqr '.result.completion.values|length')" 0 "a fixed resource has nothing to complete"
comp 80 '{"ref":{"type":"ref/tool","name":"x"},"argument":{"name":"x","value":""}}'
is "$(jqr .error.code)" -32602 "an unknown ref type: -32602"
comp 81 '{"ref":{"type":"ref/prompt","name":"review"}}'
is "$(jqr .error.code)" -32602 "a missing argument: -32602"
is "$(jqr '.result.ttlMs // "none"')" none "completion is not cacheable"
still "completion errors"
done_testing
