#include "vmm/sandbox/exec_output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/util/base64.h"

/* How many bytes at the end of p[0..len) are an incomplete UTF-8
 * sequence (0..3): a lead byte in the last three whose sequence is longer
 * than what follows it.  Anything that is not UTF-8 at all is left to
 * exec_output_line (base64). */
static size_t cut_tail(const char *p, size_t len)
{
    for (size_t k = 1; k <= 3 && k <= len; k++) {
        unsigned char c = (unsigned char)p[len - k];
        if ((c & 0xC0) == 0x80)
            continue; /* a continuation byte: its lead is further back */
        if (c < 0xC0)
            return 0; /* ASCII: nothing is cut */
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        return need > k ? k : 0;
    }
    return 0;
}

bool exec_output_pump(struct exec_output *o, exec_output_sink *sink, void *ctx)
{
    ssize_t n = read(o->fd, o->buf + o->held, EXEC_OUTPUT_CHUNK);
    if (n < 0 && errno == EINTR)
        return true;
    if (n <= 0) {
        if (o->held) /* a sequence cut at the very end goes as it is */
            sink(ctx, o, o->buf, o->held);
        o->held = 0;
        close(o->fd);
        o->fd = -1;
        return false;
    }
    size_t len = o->held + (size_t)n, keep = cut_tail(o->buf, len);
    if (len > keep)
        sink(ctx, o, o->buf, len - keep);
    memmove(o->buf, o->buf + len - keep, keep);
    o->held = keep;
    return true;
}

json_t *exec_output_line(const char *type, const char *p, size_t len)
{
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string(type));
    json_t *s = json_stringn(p, len); /* NULL when not UTF-8 */
    if (s) {
        json_object_set_new(o, "data", s);
        return o;
    }
    char *b64 = base64_encode(p, len);
    if (b64)
        json_object_set_new(o, "data_b64", json_string(b64));
    free(b64);
    return o;
}

json_t *exec_exit_record(int rc, const struct agent_exec_result *r, int64_t ms)
{
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string("exit"));
    if (rc) {
        json_object_set_new(o, "exit_code", json_integer(125));
        json_object_set_new(o, "signal", json_null());
        json_object_set_new(o, "error", json_sprintf("lost the guest agent: %s", strerror(-rc)));
    } else {
        json_object_set_new(o, "exit_code", json_integer(agent_result_status(r)));
        json_object_set_new(o, "signal", r->signaled && !r->timed_out ? json_integer(r->value)
                                                                       : json_null());
        json_object_set_new(o, "error", r->error ? json_sprintf("%s", strerror(r->error))
                                                 : json_null());
    }
    json_object_set_new(o, "timed_out", json_boolean(r->timed_out));
    json_object_set_new(o, "output_truncated", json_boolean(r->dropped > 0));
    json_object_set_new(o, "duration_ms", json_integer(ms));
    return o;
}
