#include "tests/unit/helpers.h"
#include "vmm/egress/egress_broker.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asm/bootparam.h>

#include "vmm/jail/seccomp.h"

/* ---- fake guest memory ------------------------------------------------ */

void test_mem_init(struct test_mem *t, uint64_t size)
{
    memset(t, 0, sizeof(*t));
    ck_assert_int_eq(test_mem_add(t, 0, size), 0);
}

int test_mem_add(struct test_mem *t, uint64_t gpa, uint64_t size)
{
    unsigned i = t->mem.nregions;
    ck_assert_uint_lt(i, GMEM_MAX_REGIONS);
    /* Page aligned, as guest RAM is: what maps file pages over guest RAM
     * (gmem_map_private) then works here as it does in a VM. */
    void *buf = NULL;
    ck_assert_int_eq(posix_memalign(&buf, GMEM_PAGE, size ? size : 1), 0);
    memset(buf, 0, size ? size : 1);
    int err = gmem_add_region(&t->mem, gpa, buf, size);
    if (err)
        free(buf);
    else
        t->bufs[i] = buf;
    return err;
}

void test_mem_free(struct test_mem *t)
{
    for (unsigned i = 0; i < GMEM_MAX_REGIONS; i++)
        free(t->bufs[i]);
    memset(t, 0, sizeof(*t));
}

void *test_mem_at(const struct test_mem *t, uint64_t gpa, uint64_t len)
{
    void *p = gmem_ptr(&t->mem, gpa, len);
    ck_assert_msg(p != NULL, "guest range %#llx+%#llx is not RAM", (unsigned long long)gpa,
                  (unsigned long long)len);
    return p;
}

/* ---- synthetic ELF64 -------------------------------------------------- */

static void telf_reserve(struct telf *e, size_t need)
{
    if (need <= e->cap)
        return;
    size_t cap = e->cap ? e->cap : 4096;
    while (cap < need)
        cap *= 2;
    e->data = realloc(e->data, cap);
    ck_assert_ptr_nonnull(e->data);
    memset(e->data + e->cap, 0, cap - e->cap);
    e->cap = cap;
}

void telf_init(struct telf *e, uint64_t entry, unsigned max_ph)
{
    memset(e, 0, sizeof(*e));
    e->max_ph = max_ph;
    e->size = sizeof(Elf64_Ehdr) + (size_t)max_ph * sizeof(Elf64_Phdr);
    telf_reserve(e, e->size);
    Elf64_Ehdr *eh = telf_ehdr(e);
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_ident[EI_DATA] = ELFDATA2LSB;
    eh->e_ident[EI_VERSION] = EV_CURRENT;
    eh->e_type = ET_EXEC;
    eh->e_machine = EM_X86_64;
    eh->e_version = EV_CURRENT;
    eh->e_entry = entry;
    eh->e_phoff = sizeof(Elf64_Ehdr);
    eh->e_ehsize = sizeof(Elf64_Ehdr);
    eh->e_phentsize = sizeof(Elf64_Phdr);
    eh->e_phnum = 0;
}

void telf_free(struct telf *e)
{
    free(e->data);
    memset(e, 0, sizeof(*e));
}

Elf64_Ehdr *telf_ehdr(struct telf *e)
{
    return (Elf64_Ehdr *)e->data;
}

Elf64_Phdr *telf_phdr(struct telf *e, unsigned i)
{
    ck_assert_uint_lt(i, e->max_ph);
    return (Elf64_Phdr *)(e->data + sizeof(Elf64_Ehdr)) + i;
}

uint8_t telf_pattern(uint64_t paddr, uint64_t i)
{
    return (uint8_t)((paddr >> 12) * 31 + i * 13 + 1);
}

unsigned telf_add(struct telf *e, uint32_t type, uint64_t paddr, const void *content,
                  uint64_t filesz, uint64_t memsz)
{
    unsigned idx = telf_ehdr(e)->e_phnum;
    ck_assert_uint_lt(idx, e->max_ph);
    size_t off = (e->size + 7) & ~(size_t)7;
    telf_reserve(e, off + filesz);
    for (uint64_t i = 0; i < filesz; i++)
        e->data[off + i] = content ? ((const uint8_t *)content)[i] : telf_pattern(paddr, i);
    e->size = off + filesz;
    Elf64_Phdr *ph = telf_phdr(e, idx);
    *ph = (Elf64_Phdr){
        .p_type = type, .p_flags = PF_R | PF_X, .p_offset = off,
        .p_vaddr = paddr, .p_paddr = paddr, .p_filesz = filesz, .p_memsz = memsz,
        .p_align = 8,
    };
    telf_ehdr(e)->e_phnum = (Elf64_Half)(idx + 1);
    return idx;
}

size_t note_encode(uint8_t *buf, const char *name, uint32_t namesz, uint32_t type,
                   const void *desc, uint32_t descsz)
{
    uint32_t hdr[3] = {namesz, descsz, type};
    size_t name_pad = ((size_t)namesz + 3) & ~(size_t)3;
    size_t desc_pad = ((size_t)descsz + 3) & ~(size_t)3;
    memcpy(buf, hdr, sizeof(hdr));
    memset(buf + 12, 0, name_pad + desc_pad);
    memcpy(buf + 12, name, namesz);
    if (desc)
        memcpy(buf + 12 + name_pad, desc, descsz);
    return 12 + name_pad + desc_pad;
}

unsigned telf_add_note(struct telf *e, const char *name, uint32_t type, const void *desc,
                       uint32_t descsz)
{
    uint8_t buf[256];
    ck_assert_uint_le(strlen(name) + descsz + 20, sizeof(buf));
    size_t n = note_encode(buf, name, (uint32_t)strlen(name) + 1, type, desc, descsz);
    return telf_add(e, PT_NOTE, 0, buf, n, 0);
}

void telf_valid(struct telf *e)
{
    telf_init(e, TELF_LOAD_GPA, 8);
    telf_add(e, PT_LOAD, TELF_LOAD_GPA, NULL, TELF_LOAD_FILESZ, TELF_LOAD_MEMSZ);
}

int parse_exact(int (*parse)(const uint8_t *, size_t, struct kernel_image *),
                const uint8_t *data, size_t size, struct kernel_image *img)
{
    uint8_t *copy = malloc(size ? size : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, data, size);
    memset(img, 0, sizeof(*img));
    int rc = parse(copy, size, img);
    free(copy);
    img->data = data; /* same bytes, and still alive */
    return rc;
}

/* ---- synthetic bzImage ------------------------------------------------- */

void wr8(uint8_t *p, size_t off, uint8_t v) { p[off] = v; }
void wr16(uint8_t *p, size_t off, uint16_t v) { memcpy(p + off, &v, 2); }
void wr32(uint8_t *p, size_t off, uint32_t v) { memcpy(p + off, &v, 4); }
void wr64(uint8_t *p, size_t off, uint64_t v) { memcpy(p + off, &v, 8); }
uint16_t rd16le(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
uint32_t rd32le(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
uint64_t rd64le(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* Offsets from Documentation/x86/boot.rst, "The real-mode kernel header". */
uint8_t *tbz_build(unsigned setup_sects, size_t payload, size_t *size)
{
    unsigned sects = setup_sects ? setup_sects : 4;
    size_t setup = ((size_t)sects + 1) * 512;
    size_t n = setup + payload;
    uint8_t *d = calloc(1, n); /* exact size: ASan sees reads past the end */
    ck_assert_ptr_nonnull(d);
    wr8(d, 0x1f1, (uint8_t)setup_sects);
    wr32(d, 0x1f4, (uint32_t)(payload / 16));       /* syssize */
    wr16(d, 0x1fe, 0xaa55);                         /* boot_flag */
    wr8(d, 0x200, 0xeb);                            /* jmp short */
    wr8(d, 0x201, TBZ_JUMP);
    memcpy(d + 0x202, "HdrS", 4);
    wr16(d, 0x206, 0x020f);                         /* version 2.15 */
    wr8(d, 0x211, LOADED_HIGH);                     /* loadflags */
    wr32(d, 0x214, 0x100000);                       /* code32_start */
    wr32(d, 0x22c, TBZ_INITRD_MAX);                 /* initrd_addr_max */
    wr32(d, 0x230, TBZ_ALIGN);                      /* kernel_alignment */
    wr8(d, 0x234, 1);                               /* relocatable_kernel */
    wr8(d, 0x235, 21);                              /* min_alignment */
    wr16(d, 0x236, XLF_KERNEL_64);                  /* xloadflags */
    wr32(d, 0x238, TBZ_CMDLINE_SIZE);               /* cmdline_size */
    wr64(d, 0x258, TBZ_PREF);                       /* pref_address */
    wr32(d, 0x260, TBZ_INIT_SIZE);                  /* init_size */
    for (size_t i = 0; i < payload; i++)
        d[setup + i] = (uint8_t)(i * 7 + 3);
    *size = n;
    return d;
}

/* Our children now, from /proc. */
static int children(pid_t *out, int max)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/self/task/%d/children", (int)gettid());
    FILE *f = fopen(p, "r");
    int n = 0, pid;
    if (!f)
        return -1;
    while (n < max && fscanf(f, "%d", &pid) == 1)
        out[n++] = pid;
    fclose(f);
    return n;
}

pid_t unit_start_broker(const struct egress_policy *pol, int update_fd, int *ctl)
{
    pid_t before[64], after[64], broker = -1;
    int nb = children(before, 64);
    ck_assert_int_eq(egress_broker_start(pol, NULL, update_fd, ctl), 0);
    ck_assert_int_ge(*ctl, 0);
    int na = children(after, 64);
    ck_assert_msg(nb >= 0 && na == nb + 1, "cannot find the broker in /proc");
    for (int i = 0; i < na; i++) {
        bool old = false;
        for (int j = 0; j < nb; j++)
            old |= after[i] == before[j];
        if (!old)
            broker = after[i];
    }
    ck_assert_int_gt(broker, 0);
    return broker;
}

int unit_under_filter(int kind, int (*fn)(void *arg), void *arg)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        seccomp_set_mode(SECCOMP_MODE_KILL);
        if (seccomp_apply((enum seccomp_kind)kind))
            syscall(SYS_exit_group, 99);
        /* exit_group straight away: no atexit handler (ASan's leak check
         * among them) may run under the filter. */
        syscall(SYS_exit_group, fn(arg));
    }
    int ws;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    if (WIFEXITED(ws)) {
        ck_assert_int_ne(WEXITSTATUS(ws), 99); /* the filter did not load */
        return -WEXITSTATUS(ws);
    }
    ck_assert(WIFSIGNALED(ws));
    return WTERMSIG(ws);
}
