/*
 * xschedctl devices: the scheduling domains. Each is one device, shown
 * with its node-wide identity (UUID, PCI bus id, or only an API-local name,
 * then marked unverified), its PCI bus id where known, the API-local names
 * processes reach it by (e.g. "cuda:0 in pid 123": the ordinal of one
 * process, which differs between processes under CUDA_VISIBLE_DEVICES),
 * and its queues.
 *
 * Two requests: the daemon's device records (IPC_DEVICES), then the queue
 * records (IPC_LIST), joined here by domain id. A queue registered between
 * the two has a domain not yet listed and is left out; through the client
 * socket both are limited to the caller's own queues.
 */
#include "xschedctl.h"
#include "base/compiler.h"
#include "base/devid.h"
#include "base/size.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int ctl_cmp_domain(const void *pa, const void *pb)
{
	const struct ipc_device_rec *a = pa, *b = pb;

	return a->domain < b->domain ? -1 : a->domain > b->domain;
}

static int ctl_cmp_queue(const void *pa, const void *pb)
{
	const struct ipc_queue_rec *a = pa, *b = pb;

	return a->queue_id < b->queue_id ? -1 : a->queue_id > b->queue_id;
}

/* True if @q's process and local name appeared among @qs[0..i) of @dev. */
static bool ctl_seen_before(const struct ipc_queue_rec *qs, size_t i, uint64_t dev)
{
	size_t k;

	for (k = 0; k < i; k++)
		if (qs[k].domain == dev && qs[k].pid == qs[i].pid &&
		    !strncmp(qs[k].device, qs[i].device, sizeof(qs[i].device)))
			return true;
	return false;
}

static void ctl_json_device(struct ctl_json *j, const struct ipc_device_rec *d,
			    const struct ipc_queue_rec *qs, size_t nq)
{
	size_t i;

	ctl_json_uint(j, "domain", d->domain);
	ctl_json_str(j, "kind", devid_kind_name(d->id_kind), 16);
	ctl_json_bool(j, "verified", d->id_kind != IPC_ID_UNVERIFIED);
	if (d->id_kind != IPC_ID_UNVERIFIED)
		ctl_json_str(j, "identity", d->ident, sizeof(d->ident));
	else
		ctl_json_str(j, "identity", d->name, sizeof(d->name));
	if (d->pci[0])
		ctl_json_str(j, "pci_bus_id", d->pci, sizeof(d->pci));
	else
		ctl_json_null(j, "pci_bus_id");
	ctl_json_open(j, "memory", '{');
	ctl_json_uint(j, "used_bytes", d->mem_used);
	ctl_json_uint(j, "managed_bytes", d->mem_managed);
	ctl_json_uint(j, "evicted_bytes", d->mem_evicted);
	if (d->mem_total)
		ctl_json_uint(j, "total_bytes", d->mem_total);
	else
		ctl_json_null(j, "total_bytes");
	ctl_json_uint(j, "processes", d->mem_procs);
	ctl_json_uint(j, "processes_limited", d->mem_limited);
	ctl_json_close(j, '}');
	ctl_json_open(j, "seen_as", '[');
	for (i = 0; i < nq; i++) {
		if (qs[i].domain != d->domain || ctl_seen_before(qs, i, d->domain))
			continue;
		ctl_json_open(j, NULL, '{');
		ctl_json_str(j, "name", qs[i].device, sizeof(qs[i].device));
		ctl_json_int(j, "pid", qs[i].pid);
		ctl_json_str(j, "command", qs[i].comm, sizeof(qs[i].comm));
		ctl_json_close(j, '}');
	}
	ctl_json_close(j, ']');
	ctl_json_open(j, "queues", '[');
	for (i = 0; i < nq; i++) {
		if (qs[i].domain != d->domain)
			continue;
		ctl_json_open(j, NULL, '{');
		ctl_json_uint(j, "queue", qs[i].queue_id);
		ctl_json_int(j, "pid", qs[i].pid);
		ctl_json_str(j, "name", qs[i].device, sizeof(qs[i].device));
		ctl_json_str(j, "state", ctl_qstate(&qs[i]), 16);
		ctl_json_int(j, "priority", qs[i].eff_priority);
		ctl_json_close(j, '}');
	}
	ctl_json_close(j, ']');
}

/*
 *   memory: 3.5 GiB held by 2 processes (1 under a limit) of 80 GiB; managed 1 GiB
 */
static void ctl_print_device_memory(const struct ipc_device_rec *d)
{
	char a[SIZE_TEXT], b[SIZE_TEXT];

	if (!d->mem_procs && !d->mem_total)
		return;
	printf("  memory: %s held by %u process%s", size_format(d->mem_used, a, sizeof(a)),
	       d->mem_procs, d->mem_procs == 1 ? "" : "es");
	if (d->mem_limited)
		printf(" (%u under a limit)", d->mem_limited);
	if (d->mem_total)
		printf(" of %s", size_format(d->mem_total, b, sizeof(b)));
	if (d->mem_managed)
		printf("; managed %s", size_format(d->mem_managed, a, sizeof(a)));
	if (d->mem_evicted)
		printf("; evicted to the host %s", size_format(d->mem_evicted, a, sizeof(a)));
	printf("\n");
}

/*
 * Device 1: uuid 0f1e2d3c-...  pci 0000:3b:00.0  2 queues
 *   cuda:0 in pid 123 (cu_load): queue 4 running, queue 5 idle
 */
static void ctl_print_device(const struct ipc_device_rec *d, const struct ipc_queue_rec *qs,
			     size_t nq)
{
	char buf[64], name[IPC_NAME_LEN], comm[16];
	size_t i, k, n = 0;

	for (i = 0; i < nq; i++)
		n += qs[i].domain == d->domain;
	if (d->id_kind != IPC_ID_UNVERIFIED)
		printf("Device %llu: %s %s", (unsigned long long)d->domain,
		       devid_kind_name(d->id_kind),
		       ctl_fmt_name(buf, sizeof(buf), d->ident, sizeof(d->ident)));
	else
		printf("Device %llu: unverified %s (API-local name only)",
		       (unsigned long long)d->domain,
		       ctl_fmt_name(buf, sizeof(buf), d->name, sizeof(d->name)));
	if (d->pci[0] && d->id_kind != IPC_ID_PCI)
		printf("  pci %s", ctl_fmt_name(buf, sizeof(buf), d->pci, sizeof(d->pci)));
	printf("  %zu queue%s\n", n, n == 1 ? "" : "s");
	ctl_print_device_memory(d);
	for (i = 0; i < nq; i++) {
		const char *sep = ": ";

		if (qs[i].domain != d->domain || ctl_seen_before(qs, i, d->domain))
			continue;
		printf("  %s in pid %d (%s)",
		       ctl_fmt_name(name, sizeof(name), qs[i].device, sizeof(qs[i].device)),
		       qs[i].pid, ctl_fmt_name(comm, sizeof(comm), qs[i].comm, sizeof(qs[i].comm)));
		for (k = i; k < nq; k++) {
			if (qs[k].domain != d->domain || qs[k].pid != qs[i].pid ||
			    strncmp(qs[k].device, qs[i].device, sizeof(qs[i].device)))
				continue;
			printf("%squeue %llu %s", sep, (unsigned long long)qs[k].queue_id,
			       ctl_qstate(&qs[k]));
			sep = ", ";
		}
		printf("\n");
	}
}

int ctl_devices(struct ctl *ctl, const struct ctl_verb *v, int argc, char **argv)
{
	struct ipc_device_rec *devs = NULL;
	struct ipc_queue_rec *qs = NULL;
	struct ipc_client c;
	size_t nd = 0, nq = 0, i;
	int rc;

	rc = ctl_simple_args(ctl, v, argc, argv, NULL);
	if (rc >= 0)
		return rc;
	rc = ctl_connect(ctl, &c);
	if (rc)
		return rc;
	rc = ipc_client_devices(&c, &devs, &nd);
	if (rc == 0)
		rc = ipc_client_list(&c, &qs, &nq);
	if (rc < 0) {
		rc = ctl_fail(ctl, &c, rc, "cannot list devices");
		ipc_client_close(&c);
		free(devs);
		return rc;
	}
	ipc_client_close(&c);
	qsort(devs, nd, sizeof(*devs), ctl_cmp_domain);
	qsort(qs, nq, sizeof(*qs), ctl_cmp_queue);
	if (ctl->out == CTL_OUT_JSON) {
		struct ctl_json j;

		ctl_json_init(&j, stdout);
		ctl_json_open(&j, NULL, '{');
		ctl_json_open(&j, "devices", '[');
		for (i = 0; i < nd; i++) {
			ctl_json_open(&j, NULL, '{');
			ctl_json_device(&j, &devs[i], qs, nq);
			ctl_json_close(&j, '}');
		}
		ctl_json_close(&j, ']');
		ctl_json_close(&j, '}');
	} else if (nd == 0) {
		printf("No devices.\n");
	} else {
		for (i = 0; i < nd; i++)
			ctl_print_device(&devs[i], qs, nq);
	}
	free(devs);
	free(qs);
	return CTL_EXIT_OK;
}
