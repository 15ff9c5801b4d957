/* ph_build.h: building a server from its configuration (ph_build.c). */
#ifndef PH_BUILD_H
#define PH_BUILD_H
#include "first.h"
#include "ph_conf.h"
#include "ph_server.h"

struct ph_registry;

/* Loads the configuration at path (NULL: built-in defaults), merges reg
 * (a program's registry, taken; may be NULL) and builds the server. Every
 * problem is appended to probs. Returns the server (free with
 * ph_server_free) or NULL when it cannot serve; a server can come back
 * with problems appended only when they are warnings. */
struct ph_server *ph_server_build(const char *path, struct ph_registry *reg,
				  struct ph_conf_problems *probs);
/* ph_server_build with every problem logged; NULL when not usable. */
struct ph_server *ph_server_load(const char *path);

/* Builds a server from a loaded configuration (takes ownership of conf).
 * Returns NULL and appends to probs when something derived from it is wrong. */
struct ph_server *ph_server_new(struct ph_config *conf, struct ph_conf_problems *probs);
void ph_server_free(struct ph_server *s);
/* Says that this process alone serves (stdio): a server built afterwards
 * with no request_state secret is not logged as one that cannot resume a
 * multi-round request on another process or host. */
void ph_server_single_process(void);
#endif
