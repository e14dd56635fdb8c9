/*
 * Prometheus text being built (see prom.h): a buffer grown by doubling,
 * written with vsnprintf(), grown and written again when it did not fit.
 */
#include "daemon/prom.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int xsd_text_init(struct xsd_text *t)
{
	t->len = 0;
	t->cap = 8192;
	t->oom = false;
	t->buf = malloc(t->cap);
	if (!t->buf)
		return -ENOMEM;
	t->buf[0] = '\0';
	return 0;
}

void xsd_text_vprintf(struct xsd_text *t, const char *fmt, va_list args)
{
	va_list ap;
	int n;

	for (;;) {
		va_copy(ap, args);
		n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = true;
			return;
		}
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		{
			size_t cap = 2 * t->cap + (size_t)n;
			char *grown = realloc(t->buf, cap);

			if (!grown) {
				t->oom = true;
				return;
			}
			t->buf = grown;
			t->cap = cap;
		}
	}
}

void xsd_text_printf(struct xsd_text *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xsd_text_vprintf(t, fmt, ap);
	va_end(ap);
}

char *xsd_text_finish(struct xsd_text *t, size_t *len)
{
	if (t->oom) {
		free(t->buf);
		t->buf = NULL;
		return NULL;
	}
	*len = t->len;
	return t->buf;
}

/* Label values are process names: escape what the format requires. */
void xsd_prom_label(char *out, size_t len, const char *in)
{
	size_t o = 0;

	for (; *in && o + 3 < len; in++) {
		if (*in == '\\' || *in == '"') {
			out[o++] = '\\';
			out[o++] = *in;
		} else if (*in == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else if ((unsigned char)*in >= 0x20) {
			out[o++] = *in;
		}
	}
	out[o] = '\0';
}
