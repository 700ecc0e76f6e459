/* libFuzzer target: hostile bytes as an uploaded tar (vmm/sandbox/tar_in.c,
 * libarchive's tar and gzip readers beneath it).  The sink records each
 * member; the checks: every name it gets is clean (relative, no empty,
 * "." or ".." component, no component over 255 bytes, within the room
 * given), a file's data is exactly its announced size or the upload
 * fails, and a failed upload always says why. */
#include <assert.h>
#include <string.h>

#include "vmm/sandbox/tar_in.h"

struct mem {
    const uint8_t *p;
    size_t len, off, step;
};

static ssize_t mem_read(void *opaque, void *buf, size_t len)
{
    struct mem *m = opaque;
    size_t n = m->len - m->off;
    if (n > len)
        n = len;
    if (n > m->step)
        n = m->step;
    memcpy(buf, m->p + m->off, n);
    m->off += n;
    return (ssize_t)n;
}

#define ROOM 200

static void check_name(const char *rel)
{
    size_t len = strlen(rel);
    assert(len >= 1 && len <= ROOM && rel[0] != '/' && rel[len - 1] != '/');
    for (const char *c = rel; c;) {
        const char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        assert(n >= 1 && n <= AGENT_MAX_NAME);
        assert(!(n == 1 && c[0] == '.') && !(n == 2 && c[0] == '.' && c[1] == '.'));
        c = slash ? slash + 1 : NULL;
    }
}

static int f_dir(void *o, const char *rel, uint32_t mode)
{
    (void)o;
    check_name(rel);
    assert(!(mode & ~07777u));
    return 0;
}

static int f_symlink(void *o, const char *rel, const char *target)
{
    (void)o;
    check_name(rel);
    assert(target[0] && strlen(target) < AGENT_MAX_PATH);
    return 0;
}

static int f_file(void *o, const char *rel, uint32_t mode, uint64_t size, struct tar_in *t)
{
    (void)o;
    check_name(rel);
    assert(!(mode & ~07777u) && size <= AGENT_MAX_FILE);
    static uint8_t b[4096];
    uint64_t got = 0;
    ssize_t n;
    while ((n = tar_in_data(t, b, sizeof(b))) > 0)
        got += (uint64_t)n;
    assert(n < 0 || got == size);
    return n < 0 ? -5 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct mem m = {data + 1, size - 1, 0, (size_t)data[0] * 37 + 1};
    struct tar_sink sink = {f_dir, f_symlink, f_file, NULL};
    struct tar_in_result r;
    int rc = tar_in_extract(mem_read, &m, ROOM, &sink, &r);
    assert(rc == 0 ? r.status == 0 : r.status >= 400 && r.why[0]);
    assert(r.written <= r.entries);
    return 0;
}
