/*
 * xschedd's shared state: the daemon object, its clients and their queues,
 * and the scheduler core's host state. Types only: each module declares
 * what it provides in its own header (server.h: sockets and the client
 * lifecycle; requests.h: what clients ask; host.h: the host of the
 * scheduler core (src/sched/), deciding, doorbells and the timer; slot.h:
 * every store into the clients' shared memory; send.h: replies; watch.h:
 * epoll registrations; metrics.h, prom.h: listings and metrics;
 * sockfile.h: claiming the socket paths; devices.h: the devices), so that
 * no two modules include each other (tools/include_graph.py checks it).
 * Everything runs on one epoll thread, so nothing here is locked.
 */
#ifndef XSD_DAEMON_H
#define XSD_DAEMON_H

#include "base/hist.h"
#include "daemon/config.h"
#include "daemon/devices.h"
#include "daemon/log.h"
#include "daemon/sockfile.h"
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
struct xsd_floor_dev;

/* An epoll registration: the handler gets the ready events. */
struct xsd_watch {
	int fd;
	void (*fn)(struct xsd *d, struct xsd_watch *w, uint32_t events);
};

/* A registered queue: its client's slot, as the daemon last wrote and read it. */
struct xsd_queue {
	struct sched_q sq;                 /* the scheduler core's; first */
	struct xsd_client *client;
	uint32_t slot;
	struct ipc_slot *sp;               /* &client->shm->slot[slot]; written through slot.h only */
	uint32_t decision_seq;             /* the slot's, of which we are the writer (slot.c) */
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
	bool untold;                       /* suspended without a ring (host.c) */
	uint32_t status_seen;              /* slot status_seq last handled */
	uint64_t wait_since;               /* ready and held suspended since; 0: not */
	int32_t waits_on;                  /* slot it waits on, as last read; -1 */
	/* run floors (floor.c): the slot's floor fields as last stored (slot.c) */
	int32_t floor_prio, floor_raise;
	uint32_t floor_mask;
	uint16_t floor_dev, floor_own;
	uint16_t floor_table;              /* its client's table of its device; */
					   /* IPC_FLOOR_DEVICES: none */
	uint16_t floor_upage;              /* its uid's page there; IPC_FLOOR_PAGES: none */
	bool floored;                      /* its client says a floor holds its work */
	bool floor_lazy;                   /* suspended by the floor, `run` not stored */
	struct hist *task_lat;             /* Ready-to-Idle; apart, to keep this small */
	struct heat_cells *heat;           /* its heat map's cells (heat.c); NULL: none yet */
	bool heat_floored;                 /* its client's `floored`, as marked there */
};

/* A connection (server.c), and for an agent its shared memory and doorbells (host.c). */
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
	struct xsd_outpkt *out_head, *out_tail; /* replies waiting for EPOLLOUT (send.c) */
	size_t out_bytes;
	char comm[16];
	struct ipc_shm *shm;               /* mapped by slot.c; NULL: none */
	size_t shm_size;
	uint32_t nslots;
	struct xsd_queue **queue;          /* by slot */
	uint32_t nqueues;
	uint64_t mem_limit;                /* set with xschedctl, per device; 0: none */
	/* memory preemption (memory.c) */
	bool mem_held;                     /* queues suspended: its memory is taken */
	bool mem_evicting, mem_restoring;  /* IPC_MEM_EVICT, _RESTORE sent, unanswered */
	bool mem_away;                     /* evicted and not restored */
	uint64_t mem_quiet_until_ns;       /* not offered its memory back before */
	uint64_t mem_for;                  /* the client its eviction is for; 0: none */
	struct ipc_mem mem_dev;            /* the device of its request or eviction */
	bool need;                         /* an IPC_MEM_NEED waits for its answer */
	uint32_t need_seq;
	uint64_t need_bytes, need_freed, need_until_ns;
	int32_t need_prio;
	/* run floors (floor.c): its tables, by IPC_FLOOR table index */
	uint64_t floor_dom[IPC_FLOOR_DEVICES];  /* the device's id; 0: free */
	uint32_t floor_sent[IPC_FLOOR_DEVICES]; /* pages sent (bits) */
	uint32_t floor_refs[IPC_FLOOR_DEVICES]; /* its queues on the device */
	uint32_t over_limit;               /* queues refused for want of a slot */
	uint8_t *refused;                  /* their slots: XSD_MAX_QUEUES bits, or NULL */
};

/*
 * The host of the scheduler core (host.c): the core, the policy it runs, the
 * devices, and the clients to ring after a decision.
 */
struct xsd_host {
	struct sched core;                 /* the scheduler core (src/sched/) */
	void *dl;                          /* dlopen handle of a policy .so */
	char policy[IPC_POLICY_LEN];
	struct xs_policy_conf pconf;
	struct xsd_devices devs;           /* the devices queues are on (pq.device) */
	struct xsd_floor_dev **floor;      /* run floors by device index (floor.c) */
	uint32_t nfloor;                   /* entries of `floor` */
	bool floor_cfg;                    /* [policy] floor */
	uint64_t next_id;
	uint64_t events;                   /* status changes read */
	uint64_t now;                      /* of the decision being written */
	uint32_t held;                     /* queues whose slot suspends or caps them */
	struct xsd_client *dirty;          /* clients to ring */
	struct hist wake_lat;              /* client event to daemon receipt */
	struct hist decide_lat;            /* receipt to decision written */
};

struct xsd {
	struct xsd_config cfg;
	const char *config_path;
	bool config_required;
	int epfd;
	struct xsd_watch listen_client, listen_control, sig, house;
	struct xsd_watch timer;            /* the policy's next time and the heartbeat (host.c) */
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
	struct xsd_host host;
	uint64_t beat_ns;                  /* next liveness heartbeat (host.c); 0: none */
	struct xsd_watch mem_timer;        /* memory preemption's next look (memory.c); fd -1: none */
	bool stop;
	bool reload;
	gid_t control_gid;
	/* The last reload (SIGHUP), for xschedctl status. */
	uint32_t reloads, reloads_failed;
	int32_t reload_rc;                 /* 0 or the negative errno of its failure */
	uint64_t reload_ns;
	char reload_msg[192];              /* why it failed; "" */
	struct xsd_observe *obs;           /* eBPF observation (observe.c); NULL: none */
	struct xsd_enforce *enf;           /* the device gate (enforce.c); NULL: none */
	struct xsd_heat *heat;             /* heat maps (heat.c); NULL: off */
	uint32_t rt_priority;              /* the loop's SCHED_FIFO priority in effect; 0: none */
};

#endif
