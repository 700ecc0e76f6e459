/* Names of this executable's own functions, from its ELF symbol table
 * (/proc/self/exe, .symtab): `airlock surface` names the handler a range
 * really has (a function pointer on the bus), not what a list says it
 * should have.  A stripped binary has no .symtab: every name is then NULL
 * and the report says "unknown". */
#ifndef AIRLOCK_REPORT_SYMTAB_H
#define AIRLOCK_REPORT_SYMTAB_H

#include <stddef.h>

struct symtab {
    const unsigned char *map;
    size_t size;
    const void *syms; /* Elf64_Sym[nsyms] inside map */
    size_t nsyms;
    const char *strs; /* the string table the symbols use */
    size_t strs_size;
    long bias;        /* run-time address - link-time address */
};

/* Maps /proc/self/exe.  0, or -errno (-ENOENT: no .symtab). */
int symtab_open(struct symtab *t);

/* The function whose body holds `fn` (a code address), or NULL. */
const char *symtab_name(const struct symtab *t, const void *fn);

void symtab_close(struct symtab *t);

#endif
