/* ELF64 kernels: Linux's uncompressed vmlinux and our probe guests.
 *
 * Segments are loaded at their physical addresses (p_paddr).  The entry is
 * either e_entry (Linux boot protocol, 64-bit entry) or the address in a Xen
 * PVH note (XEN_ELFNOTE_PHYS32_ENTRY), which Linux carries with CONFIG_PVH.
 */
#include <elf.h>
#include <string.h>

#include "boot/kernel.h"
#include "vmm/memory/layout.h"

#define ELF_MAX_PHDRS 64
#define XEN_ELFNOTE_PHYS32_ENTRY 18
/* Linux's x86 COMMAND_LINE_SIZE (2048) less the NUL. */
#define ELF_CMDLINE_MAX (LAYOUT_CMDLINE_MAX - 1)

/* Does [off, off+len) lie inside a file of `size` bytes? */
static int in_file(uint64_t off, uint64_t len, size_t size)
{
    return off <= size && len <= size - off;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/* Walks one PT_NOTE segment: records PVH entry and whether it is Linux. */
static int elf_scan_notes(struct kernel_image *img, uint64_t off, uint64_t len)
{
    const uint8_t *p = img->data + off;
    uint64_t pos = 0;
    /* Each note advances pos by >= 12, so this loop ends within len/12. */
    while (len - pos >= 12) {
        uint32_t namesz = rd32(p + pos), descsz = rd32(p + pos + 4), type = rd32(p + pos + 8);
        uint64_t name_off = pos + 12;
        uint64_t desc_off = name_off + (((uint64_t)namesz + 3) & ~3ULL);
        uint64_t next = desc_off + (((uint64_t)descsz + 3) & ~3ULL);
        if (desc_off > len || next > len)
            return kernel_fail(img, "ELF note at file offset %#llx runs past its segment",
                               (unsigned long long)(off + pos));
        const char *name = (const char *)p + name_off;
        if (namesz == 4 && memcmp(name, "Xen", 4) == 0 && type == XEN_ELFNOTE_PHYS32_ENTRY) {
            uint64_t entry = 0;
            if (descsz != 4 && descsz != 8)
                return kernel_fail(img, "PVH entry note has %u bytes, expected 4 or 8", descsz);
            memcpy(&entry, p + desc_off, descsz);
            if (entry == 0 || entry >= GiB(4))
                return kernel_fail(img, "PVH entry %#llx is not a 32-bit address",
                                   (unsigned long long)entry);
            img->pvh_entry = entry;
        }
        if (namesz == 6 && memcmp(name, "Linux", 6) == 0)
            img->is_linux = 1;
        pos = next;
    }
    return 0;
}

static int elf_add_load(struct kernel_image *img, unsigned idx, const Elf64_Phdr *ph)
{
    if (ph->p_memsz == 0)
        return 0;
    if (img->nsegs >= KERNEL_MAX_SEGMENTS)
        return kernel_fail(img, "more than %d loadable ELF segments", KERNEL_MAX_SEGMENTS);
    if (ph->p_filesz > ph->p_memsz)
        return kernel_fail(img, "ELF segment %u: file size %#llx exceeds memory size %#llx", idx,
                           (unsigned long long)ph->p_filesz, (unsigned long long)ph->p_memsz);
    if (!in_file(ph->p_offset, ph->p_filesz, img->size))
        return kernel_fail(img, "ELF segment %u [%#llx +%#llx) extends past the end of the file (%zu bytes): truncated?",
                           idx, (unsigned long long)ph->p_offset,
                           (unsigned long long)ph->p_filesz, img->size);
    if (ph->p_paddr + ph->p_memsz < ph->p_paddr || ph->p_paddr + ph->p_memsz > LAYOUT_MMIO_GAP_START)
        return kernel_fail(img, "ELF segment %u ends beyond %#llx", idx,
                           (unsigned long long)LAYOUT_MMIO_GAP_START);
    if (ph->p_paddr < LAYOUT_HIMEM_START)
        return kernel_fail(img, "ELF segment %u loads at %#llx, below 1 MiB where boot data lives",
                           idx, (unsigned long long)ph->p_paddr);
    uint64_t end = ph->p_paddr + ph->p_memsz;
    for (unsigned i = 0; i < img->nsegs; i++) {
        const struct kernel_segment *s = &img->segs[i];
        if (ph->p_paddr < s->gpa + s->memsz && s->gpa < end)
            return kernel_fail(img, "ELF segments overlap at physical %#llx",
                               (unsigned long long)(ph->p_paddr > s->gpa ? ph->p_paddr : s->gpa));
    }
    img->segs[img->nsegs++] = (struct kernel_segment){
        .gpa = ph->p_paddr, .file_off = ph->p_offset,
        .filesz = ph->p_filesz, .memsz = ph->p_memsz,
    };
    if (end > img->load_end)
        img->load_end = end;
    return 0;
}

/* Is [addr, addr+1) inside a loaded segment's file-backed bytes? */
static int elf_addr_loaded(const struct kernel_image *img, uint64_t addr)
{
    for (unsigned i = 0; i < img->nsegs; i++)
        if (addr >= img->segs[i].gpa && addr - img->segs[i].gpa < img->segs[i].filesz)
            return 1;
    return 0;
}

int elf_parse(const uint8_t *data, size_t size, struct kernel_image *img)
{
    Elf64_Ehdr eh;
    memset(img, 0, sizeof(*img));
    img->data = data;
    img->size = size;
    img->format = KERNEL_ELF;
    if (size < sizeof(eh))
        return kernel_fail(img, "truncated ELF header (%zu bytes)", size);
    memcpy(&eh, data, sizeof(eh));
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
        return kernel_fail(img, "not a 64-bit little-endian ELF file");
    if (eh.e_machine != EM_X86_64)
        return kernel_fail(img, "ELF machine %u is not x86-64", eh.e_machine);
    if (eh.e_type != ET_EXEC)
        return kernel_fail(img, "ELF type %u is not an executable (ET_EXEC)", eh.e_type);
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > ELF_MAX_PHDRS)
        return kernel_fail(img, "ELF program headers: %u of %u bytes (want 1..%d of %zu)",
                           eh.e_phnum, eh.e_phentsize, ELF_MAX_PHDRS, sizeof(Elf64_Phdr));
    if (!in_file(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), size))
        return kernel_fail(img, "ELF program headers extend past the end of the file: truncated?");

    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, data + eh.e_phoff + i * sizeof(ph), sizeof(ph));
        int err = 0;
        if (ph.p_type == PT_LOAD)
            err = elf_add_load(img, i, &ph);
        else if (ph.p_type == PT_NOTE) {
            if (!in_file(ph.p_offset, ph.p_filesz, size))
                return kernel_fail(img, "ELF note segment %u extends past the end of the file", i);
            err = elf_scan_notes(img, ph.p_offset, ph.p_filesz);
        }
        if (err)
            return err;
    }
    if (img->nsegs == 0)
        return kernel_fail(img, "ELF file has nothing to load");
    if (!elf_addr_loaded(img, eh.e_entry))
        return kernel_fail(img, "ELF entry %#llx is not inside a loaded segment",
                           (unsigned long long)eh.e_entry);
    if (img->pvh_entry && !elf_addr_loaded(img, img->pvh_entry))
        return kernel_fail(img, "PVH entry %#llx is not inside a loaded segment",
                           (unsigned long long)img->pvh_entry);
    img->entry64 = eh.e_entry;
    img->cmdline_max = ELF_CMDLINE_MAX;
    img->initrd_addr_max = 0x7fffffff; /* boot.rst's default without a header */
    return 0;
}
