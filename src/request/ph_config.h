/* ph_config.h: the loaded configuration as every layer reads it, and what
 * the parser of a feature section is handed. The configuration layer
 * (conf/ph_conf.c, its key table) fills these; nothing below it calls it. */
#ifndef PH_CONFIG_H
#define PH_CONFIG_H
#include "first.h"
#include "ph_listen_addr.h"
#include "ph_problems.h"
#include "ph_yaml.h"

struct ph_strlist {
	char **v;
	size_t n;
	bool any; /* written as "*" */
};

/* A token bucket's size (limits.rate, auth.allow.<principal>.rate):
 * requests per per_seconds, up to burst at once; requests 0 is no limit. */
struct ph_rate_conf {
	long long requests, per_seconds, burst;
};

/* How the master sizes its pool of workers (the workers key). static: the
 * workers count, always; dynamic: start at first, then min_idle to max_idle
 * idle ones kept, up to max; ondemand: none until a connection waits, each
 * ended after idle_timeout_ms idle. Forks: spawn_rate in the first second
 * of demand, doubling each second it lasts, up to max_spawn_rate. */
enum ph_pool_mode { PH_POOL_STATIC, PH_POOL_DYNAMIC, PH_POOL_ONDEMAND };
struct ph_pool_conf {
	enum ph_pool_mode mode;
	long long max, start, min_idle, max_idle, idle_timeout_ms;
	long long spawn_rate, max_spawn_rate;
	long long memory_percent;  /* of MemTotal that max x a worker's RSS may take */
	long long full_log_s;      /* "pool reached its maximum" at most once per this */
};

struct ph_config {
	char *file; /* as given, NULL for built-in defaults */
	char *dir;  /* directory that relative paths are resolved against */
	struct {
		char *name, *version, *title, *instructions;
		long long page_size, ttl_ms;
		char *scope; /* "public" | "private" */
		char *app_meta; /* "all" | "declared": who gets the apps' _meta.ui */
	} server;
	long long workers, max_requests, shutdown_timeout;
	struct ph_pool_conf pool; /* workers as a mapping; workers: N is static N */
	char *listen;
	char *listen_mode, *listen_owner, *listen_group; /* as written */
	struct ph_listen_perm listen_perm; /* the three read, at load */
	struct {
		struct ph_strlist origins, hosts;
		long long max_body;
		long long params_timeout_ms, body_timeout_ms; /* FastCGI read deadlines */
		struct {
			struct ph_strlist origins; /* empty: no CORS headers */
			long long max_age;
		} cors;
		char *health;               /* path of the health check, NULL: off */
		struct {
			char *path;             /* NULL: off */
			struct ph_strlist allow; /* CIDRs that may scrape */
		} metrics;
		long long drain_ms;         /* serving on (health 503) after SIGTERM */
	} http;
	struct {
		long long json_depth, yaml_depth;
		/* exec handlers (ph_exec.c) */
		long long exec_timeout_ms, exec_grace_ms, exec_max_output;
		long long exec_cpu_s, exec_memory, exec_files, exec_procs;
		long long exec_exit_grace_ms, exec_log_max;
		long long resource_bytes, completion_values;
		long long app_bytes; /* an app's file above this is a load-time warning */
		struct ph_rate_conf rate;
		long long batch_max; /* messages in one legacy JSON-RPC batch */
	} limits;
	struct {
		bool json;    /* the old key: true is format json */
		char *format; /* "text" | "json" */
		long long buffer, flush_ms; /* a FastCGI worker's lines gathered (ph_log_buffer) */
	} log;
	struct {
		long long max_ms, keepalive_ms, max_streams, max_per_principal, max_queue, max_task_ids;
		long long alone_max_ms; /* max_ms of a stream held by a process without a hub */
		long long max_resource_subscriptions, max_watches;
		long long max_authorize; /* subscriptions.authorize processes the hub runs at once */
		char *control_socket; /* '' or NULL: none */
	} subscriptions;
	struct {
		char *dir;  /* the task store */
		char *host; /* names this host in task ids ('': no name) */
		long long ttl_ms, poll_ms, timeout_ms, inline_ms;
		long long max_running, max_per_principal, max_records, max_result;
		long long purge_interval_ms; /* between the hub's passes over the store */
	} tasks;
	struct {
		long long max_age;        /* seconds a legacy session id is valid */
		long long max_terminated; /* ended session ids the hub remembers */
		long long park_timeout_ms; /* a parked call waits this long for its answers */
		long long max_parked;     /* calls parked in the hub at once */
		long long max_answer;     /* bytes of a client's answers to one round of pushed requests */
		long long answer_wait_ms; /* a worker waits this long for the hub to take an answer */
		long long max_state;      /* sessions holding state in the hub */
		long long max_subscriptions; /* resources/subscribe per session */
		long long state_idle;     /* seconds a session's state outlives its last use */
		long long replay;         /* events held per session for Last-Event-ID */
	} sessions;
	struct {
		long long concurrency; /* requests running at once over --stdio */
		long long queue;       /* requests read ahead waiting for a turn */
	} stdio;
	struct { /* telemetry: the OTEL_* variables win (ipc/ph_otel.c) */
		char *endpoint, *headers, *headers_file, *protocol, *compression;
		long long timeout_ms;
		char *service_name, *sample;
		long long max_queue, max_batch, delay_ms, metric_interval_ms, retry_budget_ms;
		long long worker_buffer_kb; /* each worker's ring of records (ipc/ph_otel_ring.c) */
		bool resource_uri_in_name;
	} telemetry;
	/* Sections owned by feature modules, parsed by the parser their row in
	 * the key table names (K_CUSTOM) and freed by its free function. */
	struct ph_registry *registry;   /* tools, prompts, resources, templates */
	struct ph_skills_conf *skills;  /* skills.manifest and what it describes */
	struct ph_auth_conf *auth;      /* auth */
	struct ph_state_conf *request_state; /* request_state */
	struct ph_cluster_conf *cluster;     /* cluster (NULL: one host, nothing shared) */
};

/* What a K_CUSTOM parser gets: the config being built, where problems go,
 * the file name for messages, the section's keys as read through their rows
 * of the table (one of the *_opts structs below, borrowed for the call; NULL
 * when the section is not a mapping) and the number of problems there were
 * before the section was read. */
struct ph_conf_ctx {
	struct ph_config *c;
	struct ph_conf_problems *probs;
	const char *file;
	const void *opts;
	size_t before;
};

/* The keys of the feature sections, filled from the rows of the key table
 * (types, bounds and defaults checked there) for the section's parser
 * (ph_sections.h). Nodes are keys the parser reads itself; all borrowed. */
struct ph_cluster_opts { /* cluster */
	char *redis, *host, *prefix, *password_file;
	long long timeout_ms, lease_ms, backoff_max_ms, lock_ms;
};
struct ph_state_opts { /* request_state */
	char *secret_file, *secret_env, *salt;
	long long max_age, max_size;
	const struct ph_ynode *previous_secret_files;
};
struct ph_oauth_opts { /* auth.oauth: lists and maps are read by ph_oauth.c */
	char *issuer, *jwks_uri, *jwks_file, *audience_match, *typ, *principal_claim, *cache_dir, *ca_file;
	long long clock_skew_s, refresh_s, min_refresh_s, max_token_bytes, fetch_timeout_ms;
	long long max_fetch_bytes, token_cache, refresh_wait_ms;
	bool client_id_audience;
	const struct ph_ynode *audiences, *algorithms, *scope_claims, *assigns_claims, *required_scopes;
	const struct ph_ynode *scope_implies;
	struct {
		char *endpoint, *client_id, *secret_file;
		long long cache_s, negative_cache_s;
	} introspection;
};
struct ph_auth_opts { /* auth */
	char *mode, *realm, *resource_metadata, *scope, *tokens_file, *stdio_principal;
	char *default_access, *module, *symbol;
	long long argon2_cache, max_assigns, assigns_depth;
	long long max_concurrent_verify, fail_limit, fail_window_s;
	const struct ph_ynode *tokens, *command, *timeout_ms, *max_output, *headers, *metadata, *allow;
	struct ph_oauth_opts oauth;
};
struct ph_list_opts { /* tools, prompts, resources, resource_templates as a mapping */
	long long ttl_ms;
	char *scope;
	const struct ph_ynode *items;
};
struct ph_pool_opts { /* workers as a mapping */
	char *mode;
	long long max, start, min_idle, max_idle, idle_timeout_ms;
	long long spawn_rate, max_spawn_rate, memory_percent, full_log_s;
};
struct ph_skills_opts { /* skills */
	char *manifest;
	long long max_files, max_bytes, max_depth;
	bool digest_cache;
};
/* Parses the node of one custom key; reports problems with ph_conf_problem
 * (x->file, node line). Returns 0 or -1. */
typedef int (*ph_conf_parse_fn)(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n);
/* Frees what the parser stored in the config. */
typedef void (*ph_conf_free_fn)(struct ph_config *c);
#endif
