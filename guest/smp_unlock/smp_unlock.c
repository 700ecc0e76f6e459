#include "guest/smp_unlock/smp_unlock.h"

#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOCK_PREFIX 0xf0
#define DS_PREFIX 0x3e
#define PAGE 4096u

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

struct bounds {
    uint64_t text, etext, locks, locks_end;
    unsigned found;
};

/* The four symbols the kernel's own call passes (_text, _etext,
 * __smp_locks, __smp_locks_end), from .symtab. */
static int find_symbols(Elf *e, struct bounds *b, char *err, size_t errlen)
{
    static const char *const names[] = {"_text", "_etext", "__smp_locks", "__smp_locks_end"};
    uint64_t *slots[] = {&b->text, &b->etext, &b->locks, &b->locks_end};
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || !sh.sh_entsize)
            return fail(err, errlen, "unreadable .symtab: %s", elf_errmsg(-1));
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)i, &sym))
                return fail(err, errlen, "symbol %zu: %s", i, elf_errmsg(-1));
            const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
            for (unsigned k = 0; name && k < 4; k++)
                if (!(b->found & 1u << k) && !strcmp(name, names[k])) {
                    *slots[k] = sym.st_value;
                    b->found |= 1u << k;
                }
        }
        break;
    }
    for (unsigned k = 0; k < 4; k++)
        if (!(b->found & 1u << k))
            return fail(err, errlen, "no symbol %s (a stripped vmlinux, or not an SMP kernel?)",
                        names[k]);
    return 0;
}

/* The file offset of [va, va+len), which must lie inside one section's file
 * bytes, or -1. */
static int64_t file_offset(Elf *e, size_t size, uint64_t va, uint64_t len)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC))
            continue;
        if (va < sh.sh_addr || va - sh.sh_addr > sh.sh_size || len > sh.sh_size - (va - sh.sh_addr))
            continue;
        uint64_t off = sh.sh_offset + (va - sh.sh_addr);
        if (sh.sh_offset > size || off > size || len > size - off)
            return -1;
        return (int64_t)off;
    }
    return -1;
}

static int32_t rd_s32(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

int smp_unlock(uint8_t *buf, size_t size, struct smp_unlock_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    if (elf_version(EV_CURRENT) == EV_NONE)
        return fail(err, errlen, "libelf: %s", elf_errmsg(-1));
    Elf *e = elf_memory((char *)buf, size);
    if (!e)
        return fail(err, errlen, "libelf: %s", elf_errmsg(-1));
    int rc = -1;
    GElf_Ehdr eh;
    struct bounds b = {0};
    int64_t text_off = -1, locks_off = -1;
    if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
        fail(err, errlen, "not an ELF file");
        goto out;
    }
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_machine != EM_X86_64) {
        fail(err, errlen, "not a 64-bit little-endian x86-64 ELF file");
        goto out;
    }
    if (find_symbols(e, &b, err, errlen))
        goto out;
    if (b.etext < b.text || b.locks_end < b.locks || (b.locks_end - b.locks) % 4) {
        fail(err, errlen, "_text..%s or __smp_locks..__smp_locks_end is not a range of "
             "4-byte entries", "_etext");
        goto out;
    }
    text_off = file_offset(e, size, b.text, b.etext - b.text);
    locks_off = file_offset(e, size, b.locks, b.locks_end - b.locks);
    if (text_off < 0 || locks_off < 0) {
        fail(err, errlen, "%s is not inside one section's bytes in the file",
             text_off < 0 ? "_text.._etext" : "__smp_locks..__smp_locks_end");
        goto out;
    }
    rc = 0;
out:
    elf_end(e);
    if (rc)
        return rc;

    /* Only now write: every target below lies in [text_off, +etext-text). */
    size_t npages = (size_t)((b.etext - b.text) / PAGE + 2);
    uint8_t *seen = calloc(npages, 1);
    if (!seen)
        return fail(err, errlen, "out of memory");
    st->entries = (size_t)((b.locks_end - b.locks) / 4);
    for (size_t i = 0; i < st->entries; i++) {
        int32_t rel = rd_s32(buf + locks_off + 4 * i);
        uint64_t target = b.locks + 4 * i + (uint64_t)(int64_t)rel;
        if (!rel || target < b.text || target >= b.etext) {
            st->outside++;
            continue;
        }
        uint8_t *p = buf + text_off + (target - b.text);
        if (*p != LOCK_PREFIX) {
            st->not_lock++;
            continue;
        }
        *p = DS_PREFIX;
        st->patched++;
        size_t page = (size_t)((target - (b.text & ~(uint64_t)(PAGE - 1))) / PAGE);
        if (!seen[page]) {
            seen[page] = 1;
            st->pages++;
        }
    }
    free(seen);
    return 0;
}
