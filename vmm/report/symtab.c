#include "vmm/report/symtab.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The section header at index i, or NULL when the table lies. */
static const Elf64_Shdr *section(const struct symtab *t, const Elf64_Ehdr *eh, unsigned i)
{
    uint64_t off = eh->e_shoff + (uint64_t)i * sizeof(Elf64_Shdr);
    if (i >= eh->e_shnum || eh->e_shentsize != sizeof(Elf64_Shdr) || off > t->size ||
        t->size - off < sizeof(Elf64_Shdr))
        return NULL;
    return (const Elf64_Shdr *)(t->map + off);
}

static int find_symtab(struct symtab *t)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)t->map;
    if (t->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
        eh->e_ident[EI_CLASS] != ELFCLASS64)
        return -ENOEXEC;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *sh = section(t, eh, i);
        if (!sh || sh->sh_type != SHT_SYMTAB)
            continue;
        const Elf64_Shdr *str = section(t, eh, sh->sh_link);
        if (!str || sh->sh_offset > t->size || sh->sh_size > t->size - sh->sh_offset ||
            str->sh_offset > t->size || str->sh_size > t->size - str->sh_offset)
            return -ENOEXEC;
        t->syms = t->map + sh->sh_offset;
        t->nsyms = sh->sh_size / sizeof(Elf64_Sym);
        t->strs = (const char *)t->map + str->sh_offset;
        t->strs_size = str->sh_size;
        return 0;
    }
    return -ENOENT;
}

static const char *sym_name(const struct symtab *t, const Elf64_Sym *s)
{
    if (s->st_name >= t->strs_size || !memchr(t->strs + s->st_name, 0, t->strs_size - s->st_name))
        return NULL;
    return t->strs + s->st_name;
}

/* PIE: the link-time address of a function we can also take the address
 * of here gives the load bias. */
static int find_bias(struct symtab *t)
{
    const Elf64_Sym *syms = t->syms;
    for (size_t i = 0; i < t->nsyms; i++) {
        const char *n = sym_name(t, &syms[i]);
        if (n && ELF64_ST_TYPE(syms[i].st_info) == STT_FUNC && !strcmp(n, "symtab_open")) {
            t->bias = (long)((uintptr_t)symtab_open - syms[i].st_value);
            return 0;
        }
    }
    return -ENOENT;
}

int symtab_open(struct symtab *t)
{
    memset(t, 0, sizeof(*t));
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0 || st.st_size <= 0) {
        int e = errno ? -errno : -ENOEXEC;
        close(fd);
        return e;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -errno;
    t->map = m;
    t->size = (size_t)st.st_size;
    int e = find_symtab(t);
    if (!e)
        e = find_bias(t);
    if (e)
        symtab_close(t);
    return e;
}

const char *symtab_name(const struct symtab *t, const void *fn)
{
    const Elf64_Sym *syms = t->syms;
    uintptr_t a = (uintptr_t)fn - (uintptr_t)t->bias;
    for (size_t i = 0; fn && i < t->nsyms; i++) {
        const Elf64_Sym *s = &syms[i];
        if (ELF64_ST_TYPE(s->st_info) == STT_FUNC && s->st_value <= a &&
            a - s->st_value < (s->st_size ? s->st_size : 1))
            return sym_name(t, s);
    }
    return NULL;
}

void symtab_close(struct symtab *t)
{
    if (t->map)
        munmap((void *)t->map, t->size);
    memset(t, 0, sizeof(*t));
}
