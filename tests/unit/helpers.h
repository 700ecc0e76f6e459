/* Shared pieces of the unit tests: a fake guest memory over host buffers,
 * and builders for synthetic ELF64 and bzImage kernels held in memory. */
#ifndef AIRLOCK_TESTS_UNIT_HELPERS_H
#define AIRLOCK_TESTS_UNIT_HELPERS_H

#include <check.h>
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "boot/kernel.h"
#include "vmm/memory/gmem.h"

/* ---- skips --------------------------------------------------------------- */

/* The running test (or a part of it) cannot run on this host: WHY says what
 * is missing.  The test goes on (or returns), and unless it fails it is
 * counted as skipped, not passed, with a "SKIP: unit: TCASE/TEST: WHY" line
 * (tests/unit/unit_main.c). */
void unit_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs fn(arg) in a forked child under the seccomp filter of `kind` (enum
 * seccomp_kind, kill mode), as the monitor's thread of that kind would:
 * the signal that ended the child (> 0, SIGSYS for a call off the list),
 * or -(what fn returned), which must be 0..98 (99 means the filter did
 * not load: a test failure). */
int unit_under_filter(int kind, int (*fn)(void *arg), void *arg);

/* Starts the egress broker as the VM process does, without secrets
 * (vmm/egress/egress_broker.h; update_fd: a sandbox's allowlist channel, or
 * -1), and finds it in /proc: the child that appeared.  Its pid; *ctl the
 * request socket.  Fails the test when either cannot be done. */
struct egress_policy;
pid_t unit_start_broker(const struct egress_policy *pol, int update_fd, int *ctl);

/* ---- fake guest memory ------------------------------------------------ */

/* A struct gmem whose regions are zeroed, page-aligned heap buffers (so
 * ASan guards their ends).  test_mem_free releases them. */
struct test_mem {
    struct gmem mem;
    void *bufs[GMEM_MAX_REGIONS];
};

/* One region [0, size). */
void test_mem_init(struct test_mem *t, uint64_t size);
/* Adds a region [gpa, gpa+size); returns gmem_add_region's result. */
int test_mem_add(struct test_mem *t, uint64_t gpa, uint64_t size);
void test_mem_free(struct test_mem *t);
/* Host pointer for a guest range that the test knows is RAM (fails the
 * test otherwise). */
void *test_mem_at(const struct test_mem *t, uint64_t gpa, uint64_t len);

/* ---- synthetic ELF64 -------------------------------------------------- */

/* A growable ELF file: the header at 0, room for `max_ph` program headers
 * right after it, then segment contents appended as they are added.
 * Pointers into it change when it grows: use telf_ehdr/telf_phdr after
 * each telf_add*. */
struct telf {
    uint8_t *data;
    size_t size, cap;
    unsigned max_ph;
};

void telf_init(struct telf *e, uint64_t entry, unsigned max_ph);
void telf_free(struct telf *e);
Elf64_Ehdr *telf_ehdr(struct telf *e);
Elf64_Phdr *telf_phdr(struct telf *e, unsigned i);
/* Appends a program header whose file bytes are `filesz` bytes of a
 * pattern derived from paddr (or `content` when not NULL); returns its
 * index. */
unsigned telf_add(struct telf *e, uint32_t type, uint64_t paddr, const void *content,
                  uint64_t filesz, uint64_t memsz);
/* Appends one ELF note (name incl. NUL, padded as the ABI wants) as its
 * own PT_NOTE segment; returns the index. */
unsigned telf_add_note(struct telf *e, const char *name, uint32_t type, const void *desc,
                       uint32_t descsz);
/* Serializes one note into buf (must be large enough); returns its size. */
size_t note_encode(uint8_t *buf, const char *name, uint32_t namesz, uint32_t type,
                   const void *desc, uint32_t descsz);

/* The standard valid kernel: one PT_LOAD at 0x200000, 0x1000 file bytes,
 * 0x2000 in memory, entry 0x200000. */
#define TELF_LOAD_GPA   0x200000ULL
#define TELF_LOAD_FILESZ 0x1000ULL
#define TELF_LOAD_MEMSZ  0x2000ULL
void telf_valid(struct telf *e);
/* The pattern byte telf_add writes at offset i of a segment at paddr. */
uint8_t telf_pattern(uint64_t paddr, uint64_t i);

/* Runs a parser (kernel_parse, elf_parse, bzimage_parse) on an exact-size
 * heap copy of data[0..size), so ASan catches any read past the end; img is
 * zeroed first and img->data points back at `data` afterwards. */
int parse_exact(int (*parse)(const uint8_t *, size_t, struct kernel_image *),
                const uint8_t *data, size_t size, struct kernel_image *img);

/* ---- synthetic bzImage ------------------------------------------------- */

/* Values of the valid synthetic bzImage. */
#define TBZ_SETUP_SECTS  4
#define TBZ_PAYLOAD      0x2000
#define TBZ_PREF         0x1000000ULL
#define TBZ_INIT_SIZE    0x800000U
#define TBZ_ALIGN        0x200000U
#define TBZ_CMDLINE_SIZE 2047U
#define TBZ_INITRD_MAX   0x37ffffffU
#define TBZ_JUMP         0x6a /* header ends at 0x26c, as 2.15 kernels */

/* A valid bzImage of (setup_sects+1)*512 + payload bytes (malloc'd); the
 * payload bytes are i*7+3.  `setup_sects` 0 is stored as 0 (meaning 4). */
uint8_t *tbz_build(unsigned setup_sects, size_t payload, size_t *size);
void wr8(uint8_t *p, size_t off, uint8_t v);
void wr16(uint8_t *p, size_t off, uint16_t v);
void wr32(uint8_t *p, size_t off, uint32_t v);
void wr64(uint8_t *p, size_t off, uint64_t v);
uint16_t rd16le(const uint8_t *p);
uint32_t rd32le(const uint8_t *p);
uint64_t rd64le(const uint8_t *p);

/* ck_assert that a parse failed with -EINVAL and an error containing
 * `needle`. */
#define ASSERT_PARSE_FAILS(rc, img, needle)                                      \
    do {                                                                          \
        ck_assert_int_eq((rc), -EINVAL);                                          \
        ck_assert_msg((img)->error[0] != 0, "no error message");                  \
        ck_assert_msg(strstr((img)->error, (needle)) != NULL,                     \
                      "error \"%s\" lacks \"%s\"", (img)->error, (needle));       \
    } while (0)

/* EXEC frames (test_agent_exec_proc.c, shared with test_agent_ctr.c):
 * the frame of the request `fill` makes, at f; a whole frame through the
 * request decoder (the agent's): 1 with *r filled (its strings in a copy
 * of the payload) once it re-encodes to the same bytes, or the decoder's
 * error; the sample with the u32 at off set to v, decoded. */
struct agent_exec_req;
size_t exec_sample(void (*fill)(struct agent_exec_req *), uint8_t *f, size_t cap);
int exec_decode(const uint8_t *f, size_t n, struct agent_exec_req *r);
int exec_with32(void (*fill)(struct agent_exec_req *), uint8_t *f, size_t cap, size_t off,
                uint32_t v);
int exec_with8(void (*fill)(struct agent_exec_req *), uint8_t *f, size_t cap, size_t off,
               uint8_t v);
/* The request fill makes, changed by edit, encoded at f: the encoder's
 * answer (its size, or -EINVAL for what the rules refuse). */
ssize_t exec_edited(void (*fill)(struct agent_exec_req *), void (*edit)(struct agent_exec_req *),
                    uint8_t *f, size_t cap);

/* ---- suites ------------------------------------------------------------ */

Suite *gmem_suite(void);
Suite *elf_suite(void);
Suite *smp_unlock_suite(void);
Suite *bzimage_suite(void);
Suite *loader_suite(void);
Suite *memmap_suite(void);
Suite *mptable_suite(void);
Suite *cpu_entry_suite(void);
Suite *bus_suite(void);
Suite *serial_suite(void);
Suite *i8042_suite(void);
Suite *boot_timer_suite(void);
Suite *snapshot_devices_suite(void);
Suite *snapshot_cpuid_suite(void);
Suite *options_suite(void);
Suite *kernel_cmdline_suite(void);
Suite *regressions_suite(void);
Suite *virtq_suite(void);
Suite *virtio_mmio_suite(void);
Suite *disk_suite(void);
Suite *blk_suite(void);
Suite *blk_spare_suite(void);
Suite *disk_control_suite(void);
Suite *agent_proto_suite(void);
Suite *agent_reseed_suite(void);
Suite *agent_dir_suite(void);
Suite *agent_cred_suite(void);
Suite *agent_mount_suite(void);
Suite *agent_watch_suite(void);
Suite *agent_exec_proc_suite(void);
Suite *agent_ctr_suite(void);
Suite *agent_linux_suite(void);
Suite *forward_suite(void);
Suite *mount_options_suite(void);
Suite *volumes_suite(void);
Suite *create_mounts_suite(void);
Suite *tar_in_suite(void);
Suite *run_copy_suite(void), *run_copy_tree_suite(void);
Suite *vsock_suite(void);
Suite *http_request_suite(void);
Suite *http_server_request_suite(void);
Suite *http_response_suite(void), *http_chunked_suite(void), *scrub_suite(void);
Suite *multipart_suite(void);
Suite *credential_suite(void), *credential_proxy_suite(void), *layer_apply_suite(void),
      *rootfs_disk_suite(void), *image_source_suite(void), *dir_disk_suite(void);
Suite *image_user_suite(void);
Suite *base64_suite(void);
Suite *e2b_wire_suite(void);
Suite *api_pty_suite(void);
Suite *exec_output_suite(void);
Suite *exec_stream_suite(void);
Suite *watch_stream_suite(void);
Suite *prom_text_suite(void);
Suite *events_suite(void);
Suite *record_keeps_suite(void);
Suite *spawner_suite(void);
Suite *egress_policy_suite(void);
Suite *surface_suite(void);
Suite *audit_suite(void), *egress_broker_suite(void), *egress_relay_suite(void);
Suite *egress_rules_suite(void), *egress_live_suite(void);
Suite *seccomp_suite(void);
Suite *oci_runtime_suite(void);
Suite *pod_suite(void);
Suite *limits_suite(void);
Suite *snapshot_file_suite(void), *snapshot_memory_suite(void);

#endif
