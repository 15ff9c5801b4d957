#!/bin/sh
# link_account: a URL-mode elicitation. The user is asked to open a page
# (on the web server of the service being linked, never with credentials in
# the URL); the request id in it is kept in the state that Phantom seals in
# requestState, so the second round knows which page the answer is about.
#
# A client must declare elicitation.url for this (else -32021 with
# data.requiredCapabilities {"elicitation":{"url":{}}}); a 2025-11-25 client
# gets error -32042 with data.elicitations instead. An "accept" answer only
# says the user agreed to open the page: a real tool would now ask its own
# service whether the link was completed, and ask again if not.
# LINK_URL (set it with env: in phantom.yaml) is the page; the default is an
# example address.
IFS= read -r req
url=${LINK_URL:-https://accounts.example.com/link}

head='{"kind":"tool","name":"link_account","state":{"link":"'
case $req in
"$head"*)
	id=${req#"$head"}
	id=${id%%\"*}
	case $id in '' | *[!0-9a-f]*) id= ;; esac
	;;
*) id= ;;
esac

if [ -n "$id" ]; then
	case ${req##*,\"inputResponses\":} in
	*'"link":{"action":"accept"'* | *'"link":{"content":{},"action":"accept"}'*)
		printf '{"content":[{"type":"text","text":"Link request %s: the page was opened."}]}\n' "$id" ;;
	*)
		printf '{"content":[{"type":"text","text":"Link request %s: not linked, the page was not opened."}],"isError":true}\n' "$id" ;;
	esac
	exit 0
fi

id=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
printf '{"inputRequired":{"inputRequests":{"link":{"method":"elicitation/create","params":{'
printf '"mode":"url","message":"Open this page to link your account.","url":"%s?request=%s"}}},' "$url" "$id"
printf '"state":{"link":"%s"}}}\n' "$id"
