/* JSON-lines audit records; see audit.h. */
#include "vmm/audit/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "vmm/util/utc_time.h"

static void make_id(char id[17])
{
    /* gmtime_r loads the time zone data the first time it runs: do that
     * now, while open() is still allowed (the seccomp filters forbid it). */
    tzset();
    uint8_t b[8] = {0};
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
        /* No entropy yet (early boot): pid and clock still tell runs apart. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 44);
        memcpy(b, &v, sizeof(b));
    }
    for (int i = 0; i < 8; i++)
        snprintf(id + 2 * i, 3, "%02x", b[i]);
}

int audit_open(struct audit *a, const char *path)
{
    make_id(a->vm_id);
    a->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
    return a->fd < 0 ? -errno : 0;
}

int audit_set_id(struct audit *a, const char *id)
{
    if (strlen(id) != 16 || strspn(id, "0123456789abcdef") != 16)
        return -EINVAL;
    memcpy(a->vm_id, id, 17);
    return 0;
}

void audit_none(struct audit *a)
{
    make_id(a->vm_id);
    a->fd = -1;
}

void audit_close(struct audit *a)
{
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
}

/* Ends a record that was cut; the room for it (and "}\n" + NUL) is kept
 * free by put(), so a cut record always says so. */
#define TRUNCATED ",\"truncated\":true"

/* Appends raw text, or marks the record full (it is then closed at the last
 * complete field). */
static void put(struct audit_rec *r, const char *s, size_t n)
{
    if (r->full || n > sizeof(r->buf) - (sizeof(TRUNCATED) - 1) - 3 - r->len) {
        r->full = true;
        return;
    }
    memcpy(r->buf + r->len, s, n);
    r->len += n;
}

static void put_escaped(struct audit_rec *r, const char *s, size_t n)
{
    put(r, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c;
            put(r, esc, 2);
        } else if (c < 0x20 || c >= 0x7f) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(r, esc, 6);
        } else {
            put(r, (const char *)&c, 1);
        }
    }
    put(r, "\"", 1);
}

/* ,"key": -- all or nothing, so a full record never ends mid-field. */
static size_t key(struct audit_rec *r, const char *k)
{
    size_t mark = r->len;
    put(r, ",\"", 2);
    put(r, k, strlen(k));
    put(r, "\":", 2);
    return mark;
}

static void field_done(struct audit_rec *r, size_t mark)
{
    if (r->full)
        r->len = mark;
}

void audit_begin(const struct audit *a, struct audit_rec *r, const char *event)
{
    char now[UTC_TIME_LEN];
    utc_time_now(now);
    r->len = 0;
    r->full = false;
    int n = snprintf(r->buf, sizeof(r->buf), "{\"time\":\"%s\",\"vm\":\"%s\"", now, a->vm_id);
    r->len = n > 0 ? (size_t)n : 0;
    audit_str(r, "event", event);
}

void audit_strn(struct audit_rec *r, const char *k, const char *val, size_t len)
{
    size_t mark = key(r, k);
    put_escaped(r, val ? val : "", val ? len : 0);
    field_done(r, mark);
}

void audit_str(struct audit_rec *r, const char *k, const char *val)
{
    audit_strn(r, k, val, val ? strlen(val) : 0);
}

void audit_u64(struct audit_rec *r, const char *k, uint64_t val)
{
    char num[24];
    size_t mark = key(r, k);
    put(r, num, (size_t)snprintf(num, sizeof(num), "%" PRIu64, val));
    field_done(r, mark);
}

void audit_i64(struct audit_rec *r, const char *k, int64_t val)
{
    char num[24];
    size_t mark = key(r, k);
    put(r, num, (size_t)snprintf(num, sizeof(num), "%" PRId64, val));
    field_done(r, mark);
}

void audit_bool(struct audit_rec *r, const char *k, bool val)
{
    size_t mark = key(r, k);
    put(r, val ? "true" : "false", val ? 4 : 5);
    field_done(r, mark);
}

void audit_strv(struct audit_rec *r, const char *k, const char *const *v, size_t n)
{
    size_t mark = key(r, k);
    put(r, "[", 1);
    for (size_t i = 0; i < n; i++) {
        if (i)
            put(r, ",", 1);
        put_escaped(r, v[i], strlen(v[i]));
    }
    put(r, "]", 1);
    field_done(r, mark);
}

void audit_u64v(struct audit_rec *r, const char *k, const uint64_t *v, size_t n)
{
    size_t mark = key(r, k);
    put(r, "[", 1);
    for (size_t i = 0; i < n; i++) {
        char num[24];
        int len = snprintf(num, sizeof(num), "%s%" PRIu64, i ? "," : "", v[i]);
        put(r, num, (size_t)len);
    }
    put(r, "]", 1);
    field_done(r, mark);
}

int audit_end(const struct audit *a, struct audit_rec *r)
{
    if (a->fd < 0)
        return 0;
    if (r->full) { /* say it was cut: a reader must not take it as whole */
        memcpy(r->buf + r->len, TRUNCATED, sizeof(TRUNCATED) - 1);
        r->len += sizeof(TRUNCATED) - 1;
        r->full = false;
    }
    memcpy(r->buf + r->len, "}\n", 2);
    r->len += 2;
    ssize_t w = write(a->fd, r->buf, r->len);
    if (w < 0)
        return -errno;
    return (size_t)w == r->len ? 0 : -EIO;
}
