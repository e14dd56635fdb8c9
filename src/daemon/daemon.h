/*
 * xschedd's shared state: the daemon object, clients and queues, and the
 * entry points between its modules (server.c: sockets and clients;
 * requests.c: what clients ask; sched.c: the host of the scheduler core
 * (src/sched/), over the clients' slots; metrics.c: listings; sockfile.c: claiming the socket paths;
 * devices.c: the devices, and their listing).
 * Everything runs on one epoll thread, so nothing here is locked.
 */
#ifndef XSD_DAEMON_H
#define XSD_DAEMON_H

#include "base/hist.h"
#include "daemon/config.h"
#include "daemon/devices.h"
#include "daemon/log.h"
#include "ipc/ipc_abi.h"
#include "ipc/ipc_msg.h"
#include "sched/sched_core.h"
#include "xsched/policy.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct xsd;
struct xsd_client;
struct xsd_observe;

/* An epoll registration: the handler gets the ready events. */
struct xsd_watch {
	int fd;
	void (*fn)(struct xsd *d, struct xsd_watch *w, uint32_t events);
};

struct xsd_queue {
	struct sched_q sq;                 /* the scheduler core's; first */
	struct xsd_client *client;
	uint32_t slot;
	struct ipc_slot *sp;               /* &client->shm->slot[slot] */
	uint32_t decision_seq;             /* the slot's, of which we are the writer */
	int64_t hint[IPC_HINT_KEYS];       /* own hints in effect */
	uint32_t hint_set;                 /* bits of hints given explicitly */
	int64_t asked_priority;            /* as given, before the ceiling's clamp */
	bool prio_privileged;              /* given by root or the control group */
	uint32_t level, level_max;
	char level_why[IPC_WHY_LEN];       /* why not higher, as the client says; "" */
	int32_t threshold, batch;
	int64_t budget_ns;
	char device[IPC_NAME_LEN];
	char backend[16];
	uint32_t applied;                  /* slot `run` as last written */
	uint32_t told;                     /* `run` as of the client's last ring */
	bool untold;                       /* suspended without a ring (sched.c) */
	uint32_t status_seen;              /* slot status_seq last handled */
	uint64_t wait_since;               /* ready and held suspended since; 0: not */
	int32_t waits_on;                  /* slot it waits on, as last read; -1 */
	struct hist *task_lat;             /* Ready-to-Idle; apart, to keep this small */
};

struct xsd_client {
	struct xsd_client *next;
	uint64_t id;
	struct xsd_watch sock;             /* the connection */
	struct xsd_watch pidw;             /* pidfd: the process exited */
	struct xsd_watch bell;             /* eventfd: client rang */
	int bell_out;                      /* eventfd: daemon rings the client */
	pid_t pid;                         /* in the daemon's pid namespace */
	int32_t nspid;                     /* in its own (daemon/peer.h); 0: ours */
	char container[IPC_CONTAINER_LEN]; /* from its cgroup path; "": none */
	uid_t uid;
	gid_t gid;
	bool privileged;                   /* root, or on the control socket */
	bool hello;
	uint64_t accepted_ns;
	uint32_t role;
	uint32_t bad_msgs;                 /* consecutive malformed packets */
	bool dirty;                        /* a slot changed: on the dirty list */
	struct xsd_client *dirty_next;
	bool dead;                         /* dropped; freed after the epoll batch */
	bool want_out;                     /* EPOLLOUT requested: replies queued */
	int epfd;
	struct xsd_outpkt *out_head, *out_tail;
	size_t out_bytes;
	char comm[16];
	struct ipc_shm *shm;
	size_t shm_size;
	uint32_t nslots;
	struct xsd_queue **queue;          /* by slot */
	uint32_t nqueues;
	uint32_t over_limit;               /* queues refused for want of a slot */
	uint8_t *refused;                  /* their slots: XSD_MAX_QUEUES bits, or NULL */
};

struct xsd_sched {
	struct sched core;                 /* the scheduler core (src/sched/) */
	void *dl;                          /* dlopen handle of a policy .so */
	char policy[IPC_POLICY_LEN];
	struct xs_policy_conf pconf;
	struct xsd_devices devs;           /* the devices queues are on (pq.device) */
	uint64_t next_id;
	uint64_t events;                   /* status changes read */
	uint64_t now;                      /* of the decision being written */
	uint32_t held;                     /* queues whose slot suspends or caps them */
	struct xsd_client *dirty;          /* clients to ring */
	struct hist wake_lat;              /* client event to daemon receipt */
	struct hist decide_lat;            /* receipt to decision written */
};

/* A socket file the daemon claimed (sockfile.c). */
struct xsd_sockfile {
	int lock_fd;                       /* flock()ed "<path>.lock"; -1: none */
	bool bound;                        /* we created the socket at the path */
	dev_t dev;                         /* ... and this is its inode */
	ino_t ino;
};

struct xsd {
	struct xsd_config cfg;
	const char *config_path;
	bool config_required;
	int epfd;
	struct xsd_watch listen_client, listen_control, sig, timer, house;
	struct xsd_sockfile file_client, file_control;
	int reserve_fd;                    /* spare descriptor for EMFILE; -1 */
	bool accept_paused;                /* out of descriptors, no reserve */
	uint64_t refused_fds;              /* connections closed for want of fds */
	struct xsd_ratelimit fd_warn, limit_warn, textfile_warn;
	struct xsd_watch textfile;         /* timerfd of the metrics textfile */
	uint32_t pending_hello;            /* connections that did not say HELLO */
	struct xsd_client *clients;
	struct xsd_client *zombies;        /* dropped during this epoll batch */
	uint32_t nclients;
	uint64_t next_client_id;
	uint64_t start_ns;
	struct xsd_sched sched;
	uint64_t beat_ns;                  /* next liveness heartbeat; 0: none (no queues) */
	bool stop;
	bool reload;
	gid_t control_gid;
	/* The last reload (SIGHUP), for xschedctl status. */
	uint32_t reloads, reloads_failed;
	int32_t reload_rc;                 /* 0 or the negative errno of its failure */
	uint64_t reload_ns;
	char reload_msg[192];              /* why it failed; "" */
	struct xsd_observe *obs;           /* eBPF observation (observe.c); NULL: none */
	uint32_t rt_priority;              /* the loop's SCHED_FIFO priority in effect; 0: none */
};

/* server.c */
int xsd_server_start(struct xsd *d);
void xsd_server_stop(struct xsd *d);
int xsd_watch_add(struct xsd *d, struct xsd_watch *w, uint32_t events);
void xsd_watch_del(struct xsd *d, struct xsd_watch *w);
/* Rings every client whose slots changed (xsd_mark_dirty()). */
void xsd_ring_dirty(struct xsd *d);
/* Frees the clients dropped while handling the last epoll batch. */
void xsd_reap_zombies(struct xsd *d);
/* Resumes every queue of every client (fail-open on stop). */
void xsd_resume_all(struct xsd *d);
/*
 * Sends one packet to @c (with @nfds descriptors, only as its first
 * queued packet); what does not fit the socket waits for EPOLLOUT. 0, or
 * -EPIPE (unreachable) / -ENOBUFS (its backlog is full): drop the client.
 */
int xsd_send(struct xsd_client *c, uint16_t type, uint32_t seq,
	     const void *body, size_t len, const int *fds, int nfds);
/* An IPC_REPLY with @status; as xsd_send(). */
int xsd_reply(struct xsd_client *c, uint32_t seq, int status);
/* The same for a refusal that says why (enum ipc_why) and the limit. */
int xsd_reply_why(struct xsd_client *c, uint32_t seq, int status, uint32_t why, int64_t limit);
/* Answers an agent's HELLO: its shared memory and doorbells. 0 or -errno. */
int xsd_hello_agent(struct xsd *d, struct xsd_client *c, uint32_t seq);
/* Unregisters @c's queue in @slot (if any) and frees it. */
void xsd_queue_free(struct xsd *d, struct xsd_client *c, uint32_t slot);
/* Reads every queue's status, decides, and tells the clients concerned.
 * @rang: the client whose doorbell brought us here (NULL: none). */
void xsd_decide(struct xsd *d, struct xsd_client *rang, uint64_t recv_ns);

/* requests.c */
/* Handles one decoded packet of @c. A negative return drops the client. */
int xsd_handle(struct xsd *d, struct xsd_client *c, const struct ipc_msg *m);
/*
 * After a reload: every queue's hints that it did not set take the new
 * defaults, and a priority its user set is clamped to the user's new
 * ceiling (or given back up to what was asked). Priorities set by root or
 * the control group stay. The caller decides again.
 */
void xsd_hints_reconfigure(struct xsd *d);
/* Logs @q's registration or its end (@what) at info level with -v. */
void xsd_log_queue(const struct xsd_queue *q, const char *what);

/* sched.c */
/* Starts the scheduler with @cfg's policy; on error @err says why. */
int xsd_sched_init(struct xsd_sched *s, const struct xsd_config *cfg,
		   char *err, size_t errlen);
void xsd_sched_fini(struct xsd_sched *s);
/* Switches to @name (built-in or absolute .so path), keeping every queue
 * and hint. On error the previous policy stays, and @err says why (the
 * module's and the daemon's ops versions for a module of another one). */
int xsd_sched_set_policy(struct xsd_sched *s, const char *name,
			 const struct xs_policy_conf *pconf, char *err, size_t errlen);
/* Takes @cfg's starvation guard and contention window (a reload). */
void xsd_sched_reconfigure(struct xsd_sched *s, const struct xsd_config *cfg);
/* Gives @q its id and hands it to the core. 0 (a queue the policy refuses
 * runs unscheduled, logged) or -ENOMEM. */
int xsd_sched_add(struct xsd_sched *s, struct xsd_queue *q);
void xsd_sched_remove(struct xsd_sched *s, struct xsd_queue *q);
/* @q's hints changed: the core takes its priority, share, deadline, laxity. */
void xsd_sched_hints_changed(struct xsd_sched *s, struct xsd_queue *q);
/* Reads @q's status from its slot and tells the core what changed.
 * @recv_ns: when the daemon learned of it, 0 when @q's client did not ring
 * (a change seen in passing is not timed). */
void xsd_sched_refresh(struct xsd_sched *s, struct xsd_queue *q, uint64_t recv_ns);
/* @q's client rang at @recv_ns: refreshes @q and has its device decided. */
void xsd_sched_rang(struct xsd_sched *s, struct xsd_queue *q, uint64_t recv_ns);
/* Decides what changed (the core's sched_run()) and writes every changed
 * decision to its slot (clients marked dirty). @recv_ns: when the
 * triggering event arrived (0: timer, etc.). */
void xsd_sched_run(struct xsd_sched *s, uint64_t recv_ns);
/* Bumps @q's slot decision_seq (release: after what it announces). */
void xsd_slot_decided(struct xsd_queue *q);
/* Puts @c on the list of clients to ring (xsd_ring_dirty()). */
void xsd_mark_dirty(struct xsd_sched *s, struct xsd_client *c);

/* devices.c: answers IPC_DEVICES (the domains @c may see). */
int xsd_devices_list(struct xsd *d, struct xsd_client *c, uint32_t seq);

/* sockfile.c */
/*
 * Makes @path free for bind(): locks "<path>.lock" (held in @sf until
 * xsd_sockfile_release()), refuses if another daemon holds it or answers
 * on @path, and removes @path only if it is a socket nobody listens on.
 * Anything else at @path is an error. Returns 0, or a negative errno with
 * the reason, for an operator, in @err.
 */
int xsd_sockfile_claim(const char *path, struct xsd_sockfile *sf, char *err, size_t errlen);
/* Records the socket just bound at @path as ours. */
void xsd_sockfile_bound(const char *path, struct xsd_sockfile *sf);
/* Removes @path if it is still the socket we bound; drops the lock. */
void xsd_sockfile_release(const char *path, struct xsd_sockfile *sf);

/* metrics.c */
void xsd_queue_record(const struct xsd_sched *s, const struct xsd_queue *q,
		      struct ipc_queue_rec *r);
/*
 * Prometheus text of the daemon, as @reader may see it (NULL: everything,
 * for the textfile): malloc()ed, *@len bytes. NULL on out-of-memory.
 */
char *xsd_metrics_text(struct xsd *d, const struct xsd_client *reader, size_t *len);
/* Prometheus text being built: printf() into it (out-of-memory is
 * remembered and fails the whole text). */
struct xsd_text;
void xsd_text_printf(struct xsd_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* @in as a label value (escaped as the format requires). */
void xsd_prom_label(char *out, size_t len, const char *in);
/*
 * (Re)arms the textfile writer for [metrics] textfile and interval_s (off
 * when the path is empty): a first write at once, then every interval.
 * 0 or -errno. Write errors are logged (rate-limited), never fatal.
 */
int xsd_textfile_apply(struct xsd *d);
void xsd_textfile_stop(struct xsd *d);

#endif
