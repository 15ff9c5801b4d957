#!/bin/bash
# nginx.sh with every fast path of docs/internals.md taking its plain path
# (PHANTOM_FAST_PATHS=off, phantom-fcgi(8)): the same checks hold for the
# code each fast path stands in for.
PHANTOM_FAST_PATHS=off exec bash "${top_srcdir:-.}/tests/integration/nginx.sh"
