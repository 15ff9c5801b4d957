#!/bin/bash
# telemetry.sh with every fast path of docs/internals.md taking its plain path
# (PHANTOM_FAST_PATHS=off, phantom-fcgi(8)): a send a record and the kernel's
# generator for each id give the same spans.
PHANTOM_FAST_PATHS=off exec bash "${top_srcdir:-.}/tests/integration/telemetry.sh"
