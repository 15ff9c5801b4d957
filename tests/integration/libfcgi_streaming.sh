#!/bin/bash
# streaming.sh with every FastCGI request read by libfcgi (PHANTOM_FCGI_READER,
# phantom-fcgi(8)): the split reader takes most requests by default, so the
# path it declines is tested whole here.
PHANTOM_FCGI_READER=libfcgi exec bash "${top_srcdir:-.}/tests/integration/streaming.sh"
