#!/bin/sh
# echo_script: returns its "text" argument. Shell builtins only, so a call
# costs one fork and one exec of /bin/sh (this is the script tool of the
# benchmark). Its input pattern allows any text without a quote or a
# backslash; what Phantom writes for such a text (a newline as \n, a tab as
# \t, a slash as \/) is already a JSON string's inside and is echoed as it
# is. A value with an escaped quote or backslash (the pattern refuses them;
# a direct call might not) is refused rather than parsed.
IFS= read -r req
case $req in
*'"text":"'*) ;;
*)
	printf '{"content":[{"type":"text","text":"echo_script needs a text argument"}],"isError":true}\n'
	exit 0 ;;
esac
text=${req#*\"text\":\"}
text=${text%%\"*}
# an escaped backslash, or a cut at an escaped quote (a trailing backslash)
case $text in
*\\\\* | *\\)
	printf '{"content":[{"type":"text","text":"echo_script takes text without quotes or backslashes"}],"isError":true}\n'
	exit 0 ;;
esac
printf '{"content":[{"type":"text","text":"%s"}]}\n' "$text"
