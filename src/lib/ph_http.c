/* ph_http.c: what both HTTP engines share (ph_http.h): where the CA
 * certificates are, and form escaping. The engines are ph_http_curl.c and
 * ph_http_ossl.c. */
#include "first.h"
#include "ph_http.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

const char *
ph_http_ca_default(const char **how)
{
	/* where the distributions a hoster runs keep one bundle of every
	 * trusted CA: Debian and Ubuntu; RHEL, CloudLinux, Alma and Rocky
	 * (both names); SUSE; Alpine and the BSDs */
	static const char *const known[] = {
		"/etc/ssl/certs/ca-certificates.crt",
		"/etc/pki/tls/certs/ca-bundle.crt",
		"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
		"/etc/ssl/ca-bundle.pem",
		"/etc/ssl/cert.pem",
	};
	const char *env = getenv("SSL_CERT_FILE");
	struct stat st;
	if (env != NULL && env[0] != '\0') {
		*how = "SSL_CERT_FILE";
		return env;
	}
	for (size_t i = 0; i < PH_ARRAY_LEN(known); i++)
		if (stat(known[i], &st) == 0 && S_ISREG(st.st_mode)) {
			*how = "the system's bundle";
			return known[i];
		}
	*how = getenv("SSL_CERT_DIR") ? "SSL_CERT_DIR" : "no CA bundle found";
	return NULL;
}

char *
ph_http_form_escape(const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = ph_xmalloc(3 * n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		    c == '.' || c == '_' || c == '~') {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
	return out;
}
