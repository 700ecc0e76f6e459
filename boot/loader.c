#include "boot/loader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "boot/cpu_entry.h"
#include "vmm/memory/layout.h"

#define PAGE_SIZE 4096ULL

uint64_t loader_place_initrd(const struct kernel_image *img, const struct gmem *mem,
                             uint64_t size)
{
    uint64_t top = gmem_low_end(mem);
    if (img->initrd_addr_max < top - 1)
        top = img->initrd_addr_max + 1;
    if (size == 0 || size > top)
        return 0;
    uint64_t addr = (top - size) & ~(PAGE_SIZE - 1);
    uint64_t floor = img->load_end > LAYOUT_HIMEM_START ? img->load_end : LAYOUT_HIMEM_START;
    return addr >= floor ? addr : 0;
}

__attribute__((format(printf, 3, 4)))
static int plan_fail(struct boot_plan *plan, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plan->error, sizeof(plan->error), fmt, ap);
    va_end(ap);
    return err;
}

static int choose_entry(const struct kernel_image *img, const struct boot_request *req,
                        struct boot_plan *plan)
{
    enum kernel_entry want = req->entry;
    if (want == ENTRY_AUTO)
        want = img->pvh_entry ? ENTRY_PVH : ENTRY_LINUX64;
    if (want == ENTRY_PVH && !img->pvh_entry)
        return plan_fail(plan, -EINVAL, "this kernel has no PVH entry note");
    plan->entry = want;
    plan->rip = want == ENTRY_PVH ? img->pvh_entry : img->entry64;
    plan->boot_info = want == ENTRY_PVH ? LAYOUT_PVH_INFO_START : LAYOUT_ZERO_PAGE_START;
    return 0;
}

int loader_load(struct kernel_image *img, const struct gmem *mem,
                const struct boot_request *req, struct boot_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    if (req->ncpus == 0 || req->ncpus > MPTABLE_MAX_CPUS)
        return plan_fail(plan, -EINVAL, "%u vCPUs: the MP table describes 1 to %d",
                         req->ncpus, MPTABLE_MAX_CPUS);
    int err = choose_entry(img, req, plan);
    if (err)
        return err;

    size_t cmdline_len = strlen(req->cmdline);
    if (cmdline_len > img->cmdline_max)
        return plan_fail(plan, -E2BIG, "command line is %zu bytes; this kernel accepts at most %u",
                         cmdline_len, img->cmdline_max);
    if (kernel_check_fits(img, mem)) {
        snprintf(plan->error, sizeof(plan->error), "%s", img->error);
        return -ENOMEM;
    }
    if (req->initrd_size) {
        plan->initrd_gpa = loader_place_initrd(img, mem, req->initrd_size);
        if (!plan->initrd_gpa)
            return plan_fail(plan, -ENOMEM,
                             "kernel (up to %llu MiB) and initrd (%llu MiB) do not fit in guest RAM",
                             (unsigned long long)(img->load_end + MiB(1) - 1) >> 20,
                             ((unsigned long long)req->initrd_size + MiB(1) - 1) >> 20);
    }

    if ((err = kernel_load(img, mem, req->map_files ? req->kernel_fd : -1)) ||
        (err = gmem_write(mem, LAYOUT_CMDLINE_START, req->cmdline, cmdline_len + 1)) ||
        (req->initrd_size &&
         (err = gmem_load_file(mem, plan->initrd_gpa, req->initrd,
                               req->map_files ? req->initrd_fd : -1, 0, req->initrd_size))) ||
        (err = mptable_write(mem, req->ncpus)) ||
        (err = cpu_entry_write_tables(mem)))
        return plan_fail(plan, -ENOMEM, "guest RAM too small for boot structures");

    if (plan->entry == ENTRY_PVH)
        err = pvh_write(mem, plan->initrd_gpa, req->initrd_size);
    else
        err = bootparams_write(img, mem, cmdline_len, plan->initrd_gpa, req->initrd_size);
    if (err)
        return plan_fail(plan, -ENOMEM, "guest RAM too small for boot structures");
    return 0;
}
