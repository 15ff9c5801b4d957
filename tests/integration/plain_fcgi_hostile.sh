#!/bin/bash
# fcgi_hostile.sh with every fast path of docs/internals.md taking its plain path
# (PHANTOM_FAST_PATHS=off, phantom-fcgi(8)) but the split reader, kept with
# PHANTOM_FCGI_READER=split so that its own plain path (no by_len index)
# meets the hostile records: the same checks hold for the code each fast
# path stands in for. plain_nginx.sh runs with the split reader off too.
PHANTOM_FAST_PATHS=off PHANTOM_FCGI_READER=split exec bash "${top_srcdir:-.}/tests/integration/fcgi_hostile.sh"
