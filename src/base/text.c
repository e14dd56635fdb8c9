/* Text as people read it (see text.h). */
#include "base/text.h"

#include <stdio.h>
#include <string.h>

/* Not printable: control characters, the C1 ones U+0080..U+009F that
 * terminals also obey included, bytes that are not UTF-8, overlong forms,
 * surrogates. */
int text_char_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] >= 0x20 && s[0] < 0x7f)
		return 1;
	if (s[0] == 0xc2)
		len = 2, lo = 0xa0;        /* not C1 */
	else if (s[0] > 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] == 0xe0)
		len = 3, lo = 0xa0;        /* not overlong */
	else if (s[0] == 0xed)
		len = 3, hi = 0x9f;        /* not a surrogate */
	else if (s[0] >= 0xe1 && s[0] <= 0xef)
		len = 3;
	else if (s[0] == 0xf0)
		len = 4, lo = 0x90;        /* not overlong */
	else if (s[0] >= 0xf1 && s[0] <= 0xf3)
		len = 4;
	else if (s[0] == 0xf4)
		len = 4, hi = 0x8f;        /* not past U+10FFFF */
	else
		return 0;
	for (i = 1; i < len; i++) {
		if (i == n)
			return -1;
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return (int)len;
}

const char *text_escape(char *out, size_t len, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, o = 0;

	while (i < n) {
		int r = text_char_len(u + i, n - i);
		char piece[5];
		size_t k, step;

		if (r > 0 && u[i] != '\\') {
			step = k = (size_t)r;
			memcpy(piece, u + i, k);
		} else {
			step = 1;
			if (u[i] == '\\' || u[i] == '\t' || u[i] == '\r' || u[i] == '\n')
				k = (size_t)snprintf(piece, sizeof(piece), "\\%c",
						     u[i] == '\t' ? 't' : u[i] == '\r' ? 'r' :
						     u[i] == '\n' ? 'n' : '\\');
			else
				k = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", u[i]);
		}
		/* Room for this piece, and for "..." unless it is the last. */
		if (o + k + (i + step < n ? 4 : 1) > len) {
			if (o + 4 <= len) {
				memcpy(out + o, "...", 3);
				o += 3;
			}
			break;
		}
		memcpy(out + o, piece, k);
		o += k;
		i += step;
	}
	if (len)
		out[o] = '\0';
	return out;
}

bool text_printable(const char *v)
{
	const unsigned char *u = (const unsigned char *)v;
	size_t n = strlen(v), i = 0;

	while (i < n) {
		int r = text_char_len(u + i, n - i);

		if (r <= 0 && u[i] != '\t')
			return false;
		i += r > 0 ? (size_t)r : 1;
	}
	return true;
}
