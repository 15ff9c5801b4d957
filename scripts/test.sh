#!/bin/bash
# Builds Phantom and runs every test, on a fresh Debian 12 machine as root:
# installs the build and test dependencies (apt-get, npm), builds with
# warnings as errors, runs `make check`, and prints "N passed, N failed".
#
#   bash scripts/test.sh              # everything
#   SKIP_INSTALL=1 bash scripts/test.sh   # dependencies already installed
set -u
cd "$(dirname "$0")/.."
top=$(pwd)

if [ "${SKIP_INSTALL:-}" = "" ]; then
	export DEBIAN_FRONTEND=noninteractive
	pkgs="build-essential autoconf automake libtool pkg-config
	      libfcgi-dev libjson-c-dev libyaml-dev libsodium-dev
	      nginx-light lighttpd apache2 libapache2-mod-fcgid spawn-fcgi libfcgi-bin
	      wrk jq curl openssl clang valgrind procps perl python3 php-cli systemd
	      dpkg-dev debhelper lintian fakeroot chromium prometheus
	      libssl-dev libcurl4-openssl-dev libc-ares-dev python3-jwt
	      apache2-suexec-pristine"
	missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
	if [ -n "$missing" ]; then
		apt-get update -qq >/dev/null 2>&1 || true
		# shellcheck disable=SC2086
		apt-get install -y -qq $missing >/dev/null || { echo "apt-get install failed"; echo "0 passed, 1 failed"; exit 1; }
	fi
	# npm installs the pinned clients (and a Node 22 binary from the npm
	# registry, so an older system node is enough). Some machines carry a
	# nodejs that bundles npm and conflicts with Debian's npm package.
	if ! command -v npm >/dev/null; then
		apt-get install -y -qq nodejs npm >/dev/null || { echo "cannot install nodejs and npm"; echo "0 passed, 1 failed"; exit 1; }
	fi
	# Debian starts these on port 80 after installing; the tests start their own.
	for s in nginx lighttpd apache2; do service "$s" stop >/dev/null 2>&1 || true; done
fi

# The independent MCP clients and the conformance suite (pinned versions in
# tests/node/package.json) go to a cache directory outside the tree.
export PHANTOM_NPM_DIR=${PHANTOM_NPM_DIR:-/var/cache/phantom-npm}
if [ "${SKIP_INSTALL:-}" = "" ] || [ ! -d "$PHANTOM_NPM_DIR/node_modules" ]; then
	mkdir -p "$PHANTOM_NPM_DIR"
	if ! cmp -s tests/node/package.json "$PHANTOM_NPM_DIR/package.json" ||
	   [ ! -d "$PHANTOM_NPM_DIR/node_modules" ]; then
		cp tests/node/package.json "$PHANTOM_NPM_DIR/package.json"
		( cd "$PHANTOM_NPM_DIR" && npm install --no-audit --no-fund --loglevel=error ) ||
			{ echo "npm install failed"; echo "0 passed, 1 failed"; exit 1; }
	fi
fi

build=$top/build-test
rm -rf "$build"
mkdir -p "$build"
( ./autogen.sh >/dev/null 2>&1 ) || { echo "autogen failed"; echo "0 passed, 1 failed"; exit 1; }
cd "$build"
if ! "$top/configure" -q --enable-werror >configure.out 2>&1; then
	cat configure.out; echo "0 passed, 1 failed"; exit 1
fi
if ! make -j2 >make.out 2>&1; then
	tail -40 make.out; echo "0 passed, 1 failed"; exit 1
fi
make -j2 check >check.out 2>&1
rc=$?
grep -E '^(PASS|FAIL|ERROR|XFAIL|XPASS|SKIP):' check.out | grep -vE '^PASS:' || true
pass=$(sed -n 's/^# PASS: *//p' check.out | tail -1)
fail=$(sed -n 's/^# FAIL: *//p' check.out | tail -1)
err=$(sed -n 's/^# ERROR: *//p' check.out | tail -1)
xpass=$(sed -n 's/^# XPASS: *//p' check.out | tail -1)
pass=${pass:-0}; fail=$(( ${fail:-0} + ${err:-0} + ${xpass:-0} ))
if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
	tail -30 check.out; fail=1
fi
# the official conformance suite's per-run summaries (scenarios, not checks)
grep -h '^# conformance ' tests/conformance/run.log tests/conformance/run_libfcgi.log 2>/dev/null | sed 's/^# //'
[ "$fail" -ne 0 ] && for f in $(find . -name '*.log' -path '*tests*'); do
	grep -qE '^(FAIL|ERROR)' "$f" && { echo "==== $f"; tail -40 "$f"; }
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
