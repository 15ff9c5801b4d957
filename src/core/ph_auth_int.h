/* ph_auth_int.h: what the reading of the auth section (ph_auth_conf.c) and
 * the checks of a request (ph_auth.c) both use. Private to core/. */
#ifndef PH_AUTH_INT_H
#define PH_AUTH_INT_H
#include "first.h"
#include "ph_auth.h"

/* A principal name: 1..PH_AUTH_PRINCIPAL_MAX bytes, no control characters
 * (it is printed in the log and handed to templates and programs). */
bool ph_auth_principal_ok(const char *s);
/* Appends s (taken) to the allow-list l. */
void ph_auth_list_push(struct ph_allow_list *l, char *s);
/* Frees every list of acc and zeroes it. */
void ph_auth_access_free(struct ph_access *acc);
/* The enum ph_kind of an allow-list key ("tools", ...), or -1. */
int ph_auth_kind_index(const char *name);
/* Adds one allow-list entry s of kind k; returns NULL or why it is refused. */
const char *ph_auth_access_add(struct ph_access *acc, int k, const char *s);
/* A WWW-Authenticate value: Bearer realm, then error, resource_metadata and
 * scope when set (RFC 6750 section 3, RFC 9728 section 5.1). Caller frees. */
char *ph_auth_challenge(const struct ph_auth_conf *a, const char *error, const char *scope);
/* The auth.allow entry of principal, or NULL. */
const struct ph_allow_entry *ph_auth_find_allow(const struct ph_auth_conf *a, const char *principal);
#endif
