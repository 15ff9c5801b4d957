#!/bin/bash
# The official TypeScript SDK v2 client (@modelcontextprotocol/client
# 2.4.0) calls every kind of tool, prompt and resource: behind nginx in the
# auto, 2026-07-28 and legacy eras, and over stdio. The client comes from the
# pinned npm packages scripts/test.sh installs (tests/node/package.json).
. "${top_srcdir:-.}/tests/lib.sh"
. "$top_srcdir/tests/reglib.sh"
command -v nginx >/dev/null || skip_all "nginx not installed"
node_setup || skip_all "npm packages not installed (run scripts/test.sh)"

E=$top_srcdir/examples
cat >"$T_DIR/phantom.yaml" <<YAML
server: { name: sdk-test, version: "1.0" }
workers: 2
tools:
  - { name: echo, input: {text: {type: string, required: true}}, module: phantom_example.so, symbol: echo }
  - { name: text_stats, input: {text: {type: string, required: true}}, module: phantom_example.so, symbol: text_stats,
      output_schema: {type: object, properties: {words: {type: integer}}, required: [words]} }
  - { name: count_to, input: {n: integer, delay_ms: integer}, module: phantom_example.so, symbol: count_to }
  - { name: all_content, module: testmod.so, symbol: all_content }
  - { name: echo_script, input: {text: {type: string, required: true}}, exec: [$E/scripts/echo_script.sh] }
  - { name: countdown, input: {from: integer, step_ms: integer}, exec: [$E/scripts/countdown.sh] }
prompts:
  - name: code_review
    arguments:
      - {name: code, required: true}
      - {name: language, complete: {module: phantom_example.so, symbol: complete_language}}
    messages: [{role: user, text: "Review this {{language}} code: {{code}}"}]
  - name: summarize_doc
    arguments: [{name: page, required: true}]
    messages: [{text: Summarize.}, {resource: "docs://{{page}}"}]
  - name: describe_logo
    messages: [{text: Describe.}, {image: $E/docs/logo.png}]
  - { name: module_prompt, arguments: [{name: topic}], module: testmod.so, symbol: prompt }
resources:
  - { uri: "docs://index", file: $E/docs/index.md }
  - { uri: "docs://logo", file: $E/docs/logo.png }
resource_templates:
  - { uri_template: "docs://{page}", dir: $E/docs }
  - { uri_template: "example://rot13/{text}", mime_type: text/plain, module: phantom_example.so, symbol: rot13 }
YAML
behind_nginx phantom_up "$T_DIR/phantom.yaml"

node_client sdk-v2-features.mjs --url "$NGINX_URL" --era auto
node_client sdk-v2-features.mjs --url "$NGINX_URL" --era 2026-07-28
node_client sdk-v2-features.mjs --url "$NGINX_URL" --era legacy
node_client sdk-v2-features.mjs --stdio "$PHANTOM" --arg -c --arg "$T_DIR/phantom.yaml" --arg --stdio --era 2026-07-28
done_testing
