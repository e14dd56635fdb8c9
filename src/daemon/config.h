/*
 * xschedd configuration: /etc/xsched/xschedd.conf (INI, parsed with inih),
 * the documented keys of dist/xschedd.conf. Unknown keys and bad values are
 * errors (a typo must not silently change scheduling).
 */
#ifndef XSD_CONFIG_H
#define XSD_CONFIG_H

#include "daemon/classes.h"
#include "sched/sched_core.h"
#include "xsched/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The build defines it from the configured sysconfdir. */
#ifndef XSD_DEFAULT_CONFIG
#define XSD_DEFAULT_CONFIG "/etc/xsched/xschedd.conf"
#endif
#define XSD_MAX_QUEUES 4096             /* the most max_queues_per_client can be */

/*
 * Starvation guard defaults (src/sched/sched_core.c, sched_guard()): a
 * queue starved a whole second gets 5% of the next, as Linux's RT
 * throttling leaves other tasks 5% of each second. A flood of higher
 * priority then delays lower work by about a second at most instead of for
 * ever, and costs the flood at most a twentieth of its device time;
 * higher-priority work that goes idle at least once a second (a foreground
 * below 100% load) never triggers it.
 */
#define XSD_GUARD_PCT_DEFAULT SCHED_GUARD_PCT_DEFAULT
#define XSD_GUARD_PERIOD_MS_DEFAULT SCHED_GUARD_PERIOD_MS_DEFAULT

/* [metrics] interval_s: a scrape interval's worth (node_exporter reads the
 * file at each scrape; Prometheus scrapes every 15 s by default). */
#define XSD_METRICS_INTERVAL_S_DEFAULT 15

/* [observe]: a process registers at its first queue, which may come a
 * while after its first context; and a bound on the table. */
#define XSD_BYPASS_GRACE_MS_DEFAULT 3000
#define XSD_BYPASS_MAX_DEFAULT 1024
/* [observe] heat maps: 10 ms windows, the last minute, within 64 MiB. */
#define XSD_HEAT_WINDOW_MS_DEFAULT 10
#define XSD_HEAT_SECONDS_DEFAULT 60
#define XSD_HEAT_MEMORY_MB_DEFAULT 64

/* [enforce]: where the device gate is pinned (bpffs), and its modes. */
#define XSD_ENFORCE_PIN_DEFAULT "/sys/fs/bpf/xsched"
enum xsd_enforce_mode {
	XSD_ENFORCE_OFF = 0,
	XSD_ENFORCE_AUDIT = 1,             /* report what `on` would refuse */
	XSD_ENFORCE_ON = 2,                /* refuse */
};

/* [memory]: how long an allocation may wait for memory freed for it. */
#define XSD_MEMORY_WAIT_MS_DEFAULT 5000

struct xsd_uid_limit {
	uid_t uid;
	int32_t priority_ceiling;
	uint64_t memory_limit;             /* per device; 0: none */
	bool has_priority, has_memory;     /* which of the two the file set */
};

struct xsd_config {
	char socket[108];
	char control_socket[108];
	char control_group[64];
	uint32_t max_clients;
	uint32_t max_clients_per_uid;      /* for non-root users */
	uint32_t max_queues_per_client;
	uint32_t max_message_size;
	uint32_t thread_slice_us;          /* the loop's CPU slice (base/slice.h); 0: kernel's */
	uint32_t realtime_priority;        /* the loop's SCHED_FIFO priority; 0: none */
	char policy[128];
	struct xs_policy_conf pconf;
	uint32_t starvation_guard_pct;     /* 0: off; XSD_GUARD_PCT_DEFAULT */
	uint32_t contention_window;        /* in-flight cap below a higher queue; 0: off */
	uint64_t idle_grace_ns;            /* idle grace cap ([policy] idle_grace_us); 0: off */
	bool floor;                        /* run floors ([policy] floor; ipc_abi.h) */
	uint32_t preempt_cap;              /* holds per request ([policy]); 0: none */
	uint64_t request_gap_ns;           /* a request's end ([policy] request_gap_us) */
	uint64_t starvation_period_ns;
	int64_t def_hint[5];               /* by enum ipc_key 1..4 */
	int32_t priority_ceiling;          /* for non-root users */
	uint64_t memory_limit;             /* for non-root users, per device; 0: none */
	bool memory_preemption;            /* [memory] preemption */
	uint32_t memory_wait_ms;           /* [memory] wait_ms */
	char metrics_textfile[256];        /* node_exporter textfile; "": none */
	uint32_t metrics_interval_s;       /* how often it is written */
	bool observe_bypass;               /* [observe] bypass: load the detector */
	uint32_t bypass_grace_ms;          /* unregistered this long: a bypass */
	uint32_t bypass_max;               /* processes tracked at most */
	char observe_libraries[1024];      /* more libraries to probe, ' '-separated */
	bool observe_runqueue;             /* [observe] runqueue_latency */
	bool heatmap;                      /* [observe] heatmap (heat.c) */
	uint32_t heat_window_ms;           /* [observe] heatmap_window_ms */
	uint32_t heat_seconds;             /* [observe] heatmap_seconds */
	uint32_t heat_memory_mb;           /* [observe] heatmap_memory_mb */
	/* [enforce] (enforce.c): lists are ' '-separated, checked when parsed */
	uint32_t enforce_mode;             /* enum xsd_enforce_mode */
	bool enforce_fail_closed;          /* the gate outlives the daemon */
	bool enforce_exempt_root;
	char enforce_cgroups[1024];        /* in scope: cgroup v2 paths */
	char enforce_uids[256];            /* in scope: "1000-59999 65534" */
	char enforce_exempt_executables[1024];
	char enforce_exempt_cgroups[1024];
	char enforce_extra_devices[512];   /* "MAJ:MIN", "MAJ:*" or /dev paths */
	char enforce_pin_path[200];
	struct xsd_uid_limit *uid_limits;
	size_t n_uid_limits;
	struct xsd_classes classes;        /* [cdi]: for `xschedctl cdi generate` */
};

void xsd_config_defaults(struct xsd_config *c);

/*
 * Calls @fn with each item of @list (a key's value of items separated by
 * spaces or tabs), NUL-terminated; an item of PATH_MAX bytes or more is
 * passed over (no key's value is that long).
 */
void xsd_config_items(const char *list, void (*fn)(void *arg, const char *item), void *arg);

/* "off", "audit", "on" by enum xsd_enforce_mode. */
extern const char *const xsd_enforce_modes[3];

/*
 * Loads @path over what @c holds (xsd_config_defaults() first). A missing
 * file is fine unless @required; a directory, an unreadable file or a read
 * error is an error. Returns 0, or a negative errno with every problem
 * found written to @err, one a line ("file:line: what"; "file: what" when
 * the file cannot be read), as many as fit. @c may be partly updated on
 * error: load into a copy to keep a running configuration.
 */
int xsd_config_load(const char *path, bool required, struct xsd_config *c,
		    char *err, size_t errlen);

/*
 * What is wrong with @path as a socket path (for the configuration keys
 * and the command line alike), or NULL: it must be absolute and fit a
 * Unix socket address (107 bytes).
 */
const char *xsd_socket_path_problem(const char *path);

/* The highest priority user @uid may ask for (root: XS_PRIORITY_MAX). */
int32_t xsd_config_ceiling(const struct xsd_config *c, uid_t uid);

/*
 * The most a process of @uid may hold per device (bytes; 0: no ceiling):
 * uid.<uid>.memory_limit, else [limits] memory_limit for users but root.
 */
uint64_t xsd_config_memory_ceiling(const struct xsd_config *c, uid_t uid);

void xsd_config_fini(struct xsd_config *c);

#endif
