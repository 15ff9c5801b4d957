#!/bin/sh
# echo_persistent.sh: the persistent form of echo_script.sh (persistent:
# true): one call per line, answered with one line carrying the call's id.
# "id" is always the last member of the line Phantom writes.
while IFS= read -r req; do
	id=${req##*\"id\":}; id=${id%\}}
	text=${req#*\"text\":\"}; text=${text%%\"*}
	case $req in *'"text":"'*) ;; *) text= ;; esac
	case $text in *\\*) text="(escaped text is not handled)" ;; esac
	printf '{"id":%s,"content":[{"type":"text","text":"%s"}]}\n' "$id" "$text"
done
