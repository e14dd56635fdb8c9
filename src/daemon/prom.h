/*
 * Prometheus text being built (prom.c), for the metrics (metrics.c) and
 * the eBPF observers' series (observe.c): a growing buffer that remembers
 * an allocation failure, so a writer prints line after line and checks
 * once, at the end.
 */
#ifndef XSD_PROM_H
#define XSD_PROM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct xsd_text {
	char *buf;                         /* NUL-terminated */
	size_t len, cap;
	bool oom;                          /* an allocation failed: the text is lost */
};

/* An empty text. 0 or -ENOMEM. */
int xsd_text_init(struct xsd_text *t);
/* printf() into @t (out-of-memory is remembered and fails the whole text). */
void xsd_text_printf(struct xsd_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void xsd_text_vprintf(struct xsd_text *t, const char *fmt, va_list args)
	__attribute__((format(printf, 2, 0)));
/* The text, malloc()ed for the caller, *@len bytes; NULL (and freed) if
 * memory ran out while it was built. */
char *xsd_text_finish(struct xsd_text *t, size_t *len);
/* @in as a label value (escaped as the format requires), cut to fit @len. */
void xsd_prom_label(char *out, size_t len, const char *in);

#endif
