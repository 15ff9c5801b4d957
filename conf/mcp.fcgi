#!/bin/sh
# Shared hosting: save as mcp.fcgi next to the .htaccess (conf/htaccess) and
# make it executable (chmod 755). mod_fcgid or CGI runs it for /mcp; it
# starts Phantom with its configuration (outside the web space, or in this
# directory, where the .htaccess serves none of it). phantom-fcgi --init
# writes this file with the real paths.
exec /home/user/phantom/bin/phantom-fcgi -c /home/user/phantom/phantom.yaml
