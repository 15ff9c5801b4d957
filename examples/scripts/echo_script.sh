#!/bin/sh
# echo_script: returns its "text" argument. Shell builtins only, so a call
# costs one fork and one exec of /bin/sh (this is the script tool of the
# benchmark). It handles plain text: a value with an escaped character
# (backslash or quote) is refused rather than parsed.
IFS= read -r req
case $req in
*'"text":"'*) ;;
*)
	printf '{"content":[{"type":"text","text":"echo_script needs a text argument"}],"isError":true}\n'
	exit 0 ;;
esac
text=${req#*\"text\":\"}
text=${text%%\"*}
case $text in
*\\*)
	printf '{"content":[{"type":"text","text":"echo_script takes plain text without escapes"}],"isError":true}\n'
	exit 0 ;;
esac
printf '{"content":[{"type":"text","text":"%s"}]}\n' "$text"
