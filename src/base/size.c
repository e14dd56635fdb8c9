/* Sizes of memory as text (see size.h). */
#include "base/size.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char units[] = "BKMGTPE";

/* The power of 1024 the unit @u names, or -1. */
static int size_unit(const char *u)
{
	const char *p;
	int shift;

	if (!*u)
		return 0;
	p = strchr(units, toupper((unsigned char)*u));
	if (!p)
		return -1;
	shift = (int)(p - units);
	u++;
	/* "B" alone; "K", "KB", "KiB". */
	if (shift == 0)
		return *u ? -1 : 0;
	if (*u == 'i' || *u == 'I')
		u++;
	if (*u == 'b' || *u == 'B')
		u++;
	return *u ? -1 : shift;
}

int size_parse(const char *text, uint64_t *out)
{
	unsigned long long whole;
	double frac = 0;
	const char *p;
	char *end;
	int shift;

	if (!text || !isdigit((unsigned char)*text))
		return -EINVAL;
	errno = 0;
	whole = strtoull(text, &end, 10);
	if (errno)
		return -ERANGE;
	p = end;
	if (*p == '.') {
		const char *f = ++p;
		double scale = 0.1;

		if (!isdigit((unsigned char)*f))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++, scale /= 10)
			frac += (*p - '0') * scale;
	}
	while (*p == ' ')
		p++;
	shift = size_unit(p);
	if (shift < 0 || (frac > 0 && shift == 0))
		return -EINVAL;
	if (shift * 10 >= 64 || whole > (UINT64_MAX >> 1) >> (shift * 10))
		return -ERANGE;
	*out = ((uint64_t)whole << (shift * 10)) +
	       (uint64_t)(frac * (double)(1ull << (shift * 10)));
	return 0;
}

const char *size_format(uint64_t bytes, char *buf, size_t len)
{
	int shift = 0;

	while (shift < 6 && bytes >> ((shift + 1) * 10))
		shift++;
	if (!shift)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else if (bytes & ((1ull << (shift * 10)) - 1))
		snprintf(buf, len, "%.1f %ciB", (double)bytes / (double)(1ull << (shift * 10)),
			 units[shift]);
	else
		snprintf(buf, len, "%llu %ciB", (unsigned long long)(bytes >> (shift * 10)),
			 units[shift]);
	return buf;
}
