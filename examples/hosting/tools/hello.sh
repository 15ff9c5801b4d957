#!/bin/sh
# hello.sh: an exec tool in POSIX sh. The call arrives as one JSON object on
# stdin; the input schema only lets plain names through, so a sed that reads
# "name" in "arguments" is enough here (a real tool would use jq or a
# language with JSON).
call=$(cat)
name=$(printf '%s' "$call" | sed -n 's/.*"arguments":{[^}]*"name":"\([A-Za-z0-9 ._-]*\)".*/\1/p')
[ -n "$name" ] || name=world
printf '{"content":[{"type":"text","text":"Hello, %s!"}]}\n' "$name"
