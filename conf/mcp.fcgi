#!/bin/sh
# Shared hosting: save as mcp.fcgi next to the .htaccess (conf/htaccess) and
# make it executable (chmod 755). mod_fcgid or CGI runs it for /mcp; it
# starts Phantom with its configuration, kept outside the web space.
exec /home/user/phantom/bin/phantom-fcgi -c /home/user/phantom/phantom.yaml
