#!/bin/sh
# a tool for hub.sh: reads the request, answers with one text item
cat >/dev/null
printf '{"content":[{"type":"text","text":"echo"}]}\n'
