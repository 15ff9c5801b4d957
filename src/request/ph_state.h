/* ph_state.h: requestState, the continuation of a multi-round request sealed
 * for the client (mcp-wire §5.4). XChaCha20-Poly1305 under a key derived from
 * the configured secret and salt; bound to the principal, method, target and
 * a digest of the arguments; expires after request_state.max_age. Any worker
 * on any host with the same secret can open it. */
#ifndef PH_STATE_H
#define PH_STATE_H
#include "first.h"
#include "ph_config.h"
#include <json-c/json.h>

#define PH_STATE_MAX_KEYS 8

struct ph_state_conf {
	unsigned char key[32];                    /* seals and opens */
	unsigned char prev[PH_STATE_MAX_KEYS][32];/* open only (rotation) */
	size_t nprev;
	long long max_age;                        /* seconds */
	long long max_size;                       /* longest requestState accepted, bytes */
	bool ephemeral;                           /* no secret configured: random per start */
};

enum ph_state_err {
	PH_STATE_OK = 0,
	PH_STATE_INVALID,       /* garbage, truncated, tampered, unknown key: one answer for all */
	PH_STATE_TOO_LARGE,
	PH_STATE_EXPIRED,
	PH_STATE_PRINCIPAL,
	PH_STATE_METHOD,
	PH_STATE_TARGET,
	PH_STATE_ARGUMENTS,
};

/* The parser of the request_state section is declared in ph_sections.h. */
/* Fills c->request_state with an ephemeral key when the section is absent. */
void ph_state_conf_default(struct ph_config *c);

/* Seals state (borrowed) for a later retry of method/target with args
 * (borrowed, may be NULL). Returns a base64url string; caller frees. */
char *ph_state_seal(const struct ph_state_conf *sc, const char *principal, const char *method,
		    const char *target, struct json_object *args, struct json_object *state,
		    int64_t now_s);
/* Seals plen bytes of plain (borrowed) as they are: the last step of
 * ph_state_seal, for the fuzz harness that feeds the opener chosen
 * plaintext. Returns a base64url string; caller frees. */
char *ph_state_seal_bytes(const struct ph_state_conf *sc, const void *plain, size_t plen);
/* Opens token and checks expiry and binding. On PH_STATE_OK *state is the
 * sealed state (caller puts). */
enum ph_state_err ph_state_open(const struct ph_state_conf *sc, const char *token,
				const char *principal, const char *method, const char *target,
				struct json_object *args, struct json_object **state,
				int64_t now_s) PH_WUR;
/* Seals doc (borrowed, an object) under the same keys for another purpose
 * (a short label, e.g. "session"): a token of one purpose never opens as
 * another. Returns a base64url string; caller frees. */
char *ph_state_seal_doc(const struct ph_state_conf *sc, const char *purpose, struct json_object *doc);
/* Opens a token sealed by ph_state_seal_doc for purpose with the current or
 * a previous key. Returns the document (caller puts), or NULL when the token
 * is longer than max_len, garbage, truncated, altered or of another purpose.
 * Checking what is inside (expiry, binding) is the caller's. */
struct json_object *ph_state_open_doc(const struct ph_state_conf *sc, const char *purpose,
				      const char *token, size_t max_len) PH_WUR;
/* A message for the client that says which check failed and nothing more. */
const char *ph_state_message(enum ph_state_err e);
/* Canonical JSON (object keys sorted, no spaces) of v, for digests. Caller frees. */
char *ph_json_canonical(struct json_object *v);
#endif
