/* ph_exec_conf.h: the one parser of an exec handler's configuration: the
 * command list, env, cwd, timeout_ms, max_output and persistent, read from a mapping of
 * a tool, prompt, resource, template or completion (phantom.yaml), of a
 * dynamic skill (the skills manifest) or of the authenticator (auth). What
 * differs between them is the caller's table of bounds. */
#ifndef PH_EXEC_CONF_H
#define PH_EXEC_CONF_H
#include "first.h"
#include "ph_exec.h"
#include "ph_yread.h"

/* The documented bounds of an exec handler's timeout_ms and max_output. */
#define PH_EXEC_TIMEOUT_MAX_MS 86400000LL
#define PH_EXEC_OUTPUT_MAX 1073741824LL

struct ph_exec_bounds {
	const char *argv_key;   /* the key of the command list: "exec", "command" */
	const char *section;    /* key names are reported as SECTION.KEY, or KEY when NULL */
	size_t max_args;        /* most items of the command list (SIZE_MAX: no bound) */
	long long timeout_min, timeout_max, timeout_def; /* timeout_ms; def 0: limits.exec_timeout_ms */
	long long output_min, output_max, output_def;    /* max_output; def 0: limits.exec_max_output */
	bool env_cwd;           /* env and cwd are read (otherwise the caller refuses them) */
	bool cwd_dir;           /* without cwd, the command runs in dir (otherwise in the server's) */
	bool persistent;        /* the persistent key is read (otherwise the caller refuses it) */
};

/* The bounds of EXEC HANDLERS in phantom.yaml(5), for tools, prompts,
 * resources, templates, completions and dynamic skills. */
extern const struct ph_exec_bounds ph_exec_handler_bounds;

/* Reads the exec handler of map into *spec: the program resolved against
 * dir (and the PATH the command will get) to an absolute path, env checked,
 * cwd made absolute, the limits bounded. Without a command list in map only
 * the limits are read (spec->argv stays NULL). Problems go to s with the
 * map's lines. Returns 0, or -1 after reporting with *spec empty. The caller
 * frees spec's strings (ph_exec_spec_clear). */
int ph_exec_spec_parse(struct ph_ysink *s, const struct ph_ynode *map, const struct ph_exec_bounds *b,
		       const char *dir, struct ph_exec_spec *spec);
/* Frees what ph_exec_spec_parse stored and zeroes spec. */
void ph_exec_spec_clear(struct ph_exec_spec *spec);
/* The exec limits of a configuration (limits.exec_*). */
struct ph_config;
void ph_exec_limits_of(const struct ph_config *c, struct ph_exec_limits *lim);
#endif
