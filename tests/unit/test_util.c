/* test_util.c: bounded number parsing, buffers, paths, trimming. */
#include "first.h"
#include "ph_util.h"
#include "tap.h"
#include <stdlib.h>

int
main(void)
{
	long long v = 0;
	const char *err = NULL;
	struct ph_buf b;
	size_t n;
	const char *t;
	char *p;

	ok(ph_strtonum("42", 0, 100, &v, &err) == 0 && v == 42, "strtonum parses 42");
	ok(ph_strtonum("101", 0, 100, &v, &err) != 0, "strtonum refuses above max");
	is_str(err, "is too large", "strtonum says why");
	ok(ph_strtonum("-1", 0, 100, &v, &err) != 0, "strtonum refuses below min");
	ok(ph_strtonum("12x", 0, 100, &v, &err) != 0, "strtonum refuses trailing junk");
	ok(ph_strtonum("", 0, 100, &v, &err) != 0, "strtonum refuses empty");
	ok(ph_strtonum("99999999999999999999", 0, INT64_MAX, &v, &err) != 0, "strtonum refuses overflow");

	ph_buf_init(&b);
	for (int i = 0; i < 1000; i++)
		ph_buf_printf(&b, "%d,", i);
	ok(b.len > 2000 && b.data[b.len] == '\0', "buffer grows and stays terminated");
	p = ph_buf_steal(&b);
	ok(strncmp(p, "0,1,2,", 6) == 0 && b.data == NULL, "steal hands over the data");
	free(p);

	t = ph_trim("  \tvalue \t ", &n);
	ok(n == 5 && strncmp(t, "value", 5) == 0, "trim removes OWS on both sides");
	ok(ph_strcaseeq("Mcp-Method", "mcp-method"), "header names compare case-insensitively");
	ok(!ph_strcaseeq("Mcp-Method", "Mcp-Metho"), "different lengths differ");

	p = ph_path_join("/etc/phantom", "skills/manifest.yaml");
	is_str(p, "/etc/phantom/skills/manifest.yaml", "relative paths join the directory");
	free(p);
	p = ph_path_join("/etc/phantom", "/abs/x");
	is_str(p, "/abs/x", "absolute paths stay");
	free(p);
	p = ph_dirname("conf/phantom.yaml");
	is_str(p, "conf", "dirname");
	free(p);
	p = ph_dirname("phantom.yaml");
	is_str(p, ".", "dirname without a slash");
	free(p);
	return tap_done();
}
