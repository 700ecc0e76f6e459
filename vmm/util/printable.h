/* Bytes someone else chose (a tar member's name, a guest's file name) in
 * a one-line message: anything outside printable ASCII, and '\', become
 * \xNN, so the line stays one line, valid UTF-8 and unambiguous. */
#ifndef AIRLOCK_UTIL_PRINTABLE_H
#define AIRLOCK_UTIL_PRINTABLE_H

#include <stddef.h>

/* Writes the escaped form of s into out (cap >= 1 bytes), cut to fit with
 * "..." at the end; returns out. */
const char *printable(const char *s, char *out, size_t cap);

/* A limit in a message: "16 GiB", "64 MiB" when it is a whole number of
 * them, else "N bytes"; returns out. */
const char *size_text(unsigned long long n, char *out, size_t cap);

#endif
