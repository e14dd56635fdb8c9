/*
 * Text from files and clients, said back to people: which bytes are
 * printable (ASCII and UTF-8, never control characters, C1 ones included,
 * malformed or overlong forms, surrogates), and a byte string escaped into
 * one line of a message. For the daemon's configuration reader and its
 * messages.
 */
#ifndef XS_BASE_TEXT_H
#define XS_BASE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The length of the printable character that starts @s (@n bytes): 1 for
 * printable ASCII, 2 to 4 for printable UTF-8; 0 if @s starts none; -1 if
 * @s is the start of one cut short by @n.
 */
int text_char_len(const unsigned char *s, size_t n);

/*
 * @s (@n bytes) as one line of a message: printable text as it is, a
 * backslash doubled, tab, CR and LF as \t, \r and \n, every other byte as
 * \xNN; cut with "..." to fit @len (at least 4). Returns @out.
 */
const char *text_escape(char *out, size_t len, const char *s, size_t n);

/* Whether @v is printable text (tabs allowed: some values are lists). */
bool text_printable(const char *v);

#endif
