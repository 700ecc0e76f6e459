/* airlock-runtime's errors; see runtime_log.h. */
#include "vmm/runtime/runtime_log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

static const char *log_path;
static bool log_json;

void runtime_log_setup(const char *path, bool json)
{
    log_path = path;
    log_json = json;
}

static void to_log(const char *level, const char *msg)
{
    if (!log_path)
        return;
    int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    char line[4096 + 256];
    int n;
    if (log_json) {
        char when[64];
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        char stamp[96];
        snprintf(stamp, sizeof(stamp), "%s.%09ldZ", when, ts.tv_nsec);
        json_t *j = json_pack("{s:s, s:s, s:s}", "level", level, "msg", msg, "time", stamp);
        char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
        n = snprintf(line, sizeof(line), "%s\n", s ? s : "{\"level\":\"error\"}");
        free(s);
        json_decref(j);
    } else {
        n = snprintf(line, sizeof(line), "%s: %s\n", level, msg);
    }
    if (n > (int)sizeof(line) - 1)
        n = (int)sizeof(line) - 1;
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
    close(fd);
}

/* An error also goes to stderr; a warning only to the log. */
static void report(const char *level, const char *fmt, va_list ap)
{
    char msg[4096];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (!strcmp(level, "error"))
        fprintf(stderr, "airlock-runtime: %s\n", msg);
    to_log(level, msg);
}

int runtime_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("error", fmt, ap);
    va_end(ap);
    return 1;
}

void runtime_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("warning", fmt, ap);
    va_end(ap);
}
