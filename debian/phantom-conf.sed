# Turns the bundled conf/phantom.yaml, whose paths are relative to conf/ in
# the source tree, into /etc/phantom/phantom.yaml, whose paths point at the
# installed examples and skills (debian/rules checks that no "../" is left).
# The delete_file example deletes files: its sandbox is the service's state
# directory, the one place ProtectSystem=strict leaves writable.
s#\.\./examples/sandbox#/var/lib/phantom/sandbox#g
s#\.\./examples/#/usr/share/phantom/examples/#g
s#\.\./examples\b#/usr/share/phantom/examples#g
s#\.\./skills/#/usr/share/phantom/skills/#g
s#^  \# The manifest, relative to this file: the bundled example skills\.#  \# The manifest (relative paths are relative to this file): the example skills.#
