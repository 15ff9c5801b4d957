#!/bin/bash
# The official conformance suite's 2026-07-28 and 2025-11-25 server
# scenarios behind nginx with every FastCGI request read by libfcgi
# (PHANTOM_FCGI_READER, phantom-fcgi(8)); run.sh runs them all on the
# default reader.
PHANTOM_FCGI_READER=libfcgi CONFORMANCE_SUBSET=core exec bash "${top_srcdir:-.}/tests/conformance/run.sh"
