/* ph_hub_session.h: what the hub keeps of legacy 2025-11-25 sessions
 * (ph_hub_session.c): the ids ended with DELETE, until they would have
 * expired, so that every worker of the host refuses them, and the calls
 * parked on a request pushed to the client until its answers are in. */
#ifndef PH_HUB_SESSION_H
#define PH_HUB_SESSION_H
#include "first.h"
#include "ph_server.h"
#include "ph_hubmsg.h"

struct ph_hub_sessions;
struct ph_hub_states;

/* The sessions of a hub serving srv (borrowed; see ph_hub_sessions_reconf). */
struct ph_hub_sessions *ph_hub_sessions_new(struct ph_server *srv);
void ph_hub_sessions_free(struct ph_hub_sessions *t);
/* The sessions' log levels, subscriptions and GET streams (ph_hub_state.c;
 * borrowed, freed with t). */
struct ph_hub_states *ph_hub_sessions_states(struct ph_hub_sessions *t);
/* After a reload: the limits of srv apply. */
void ph_hub_sessions_reconf(struct ph_hub_sessions *t, struct ph_server *srv);
/* Handles the session or park message m (SESSION_*, PARK_CALL,
 * PARK_ANSWER; borrowed); fd (the reply socket, or the parked call's
 * connection; -1: none came) is taken. */
void ph_hub_sessions_message(struct ph_hub_sessions *t, const struct ph_hubmsg *m, int fd);
/* An answer to a request pushed by a call parked here that another host
 * took (cluster:; text, len bytes: its PARK_ANSWER message, opened). Its
 * client was told 202 there: a refusal is logged; the round's last answer
 * resumes the call here. */
void ph_hub_sessions_remote_answer(struct ph_hub_sessions *t, const char *text, size_t len);
/* With cluster: asked before the answer out to a session message m
 * (borrowed) goes to the worker waiting on fd; true when it takes fd and
 * answers it later (ph_hub_sessions_answer), having asked Redis first. */
typedef bool (*ph_hub_sessions_defer_fn)(void *ctx, const struct ph_hubmsg *m, const char *out, int fd);
void ph_hub_sessions_defer(struct ph_hub_sessions *t, ph_hub_sessions_defer_fn fn, void *ctx);
/* Sends out to the worker waiting on fd and closes fd. */
void ph_hub_sessions_answer(int fd, const char *out);
/* Another host ended the session sid (its expiry exp, seconds): refused
 * here too until then, and its GET streams here end. */
void ph_hub_sessions_ended_elsewhere(struct ph_hub_sessions *t, const unsigned char *sid, int64_t exp);
/* Called every loop: forgets ended ids past their expiry now and then. */
void ph_hub_sessions_tick(struct ph_hub_sessions *t);
/* The epoll fd of the parked calls' connections, for the hub's loop; when
 * it is readable, ph_hub_sessions_events handles what happened. */
int ph_hub_sessions_fd(const struct ph_hub_sessions *t);
void ph_hub_sessions_events(struct ph_hub_sessions *t);
/* SIGTERM: every parked call ends with an error result saying so. */
void ph_hub_sessions_stop(struct ph_hub_sessions *t);
/* Calls parked now. */
size_t ph_hub_sessions_parked(const struct ph_hub_sessions *t);
/* Ended ids now remembered. */
size_t ph_hub_sessions_ended(const struct ph_hub_sessions *t);
#endif
