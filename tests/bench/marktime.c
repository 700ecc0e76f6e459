/* marktime MARKER CMD [ARGS...]: runs CMD with its stdout on a pipe and
 * prints, on one line, how long after the fork the MARKER text appeared on
 * that stdout, how long until CMD exited (its status is known), how long
 * until every process it started had exited too (teardown done), the
 * largest peak RSS among all of them, and CMD's status:
 *     marker_ms=41.2 exit_ms=57.9 gone_ms=60.1 rss_kb=34900 status=0
 * marktime is a child subreaper, so processes CMD leaves behind (airlock's
 * teardown child) are waited for and measured too.  marker_ms is -1 when
 * the marker never appeared.  CMD's stderr is passed through; its stdout is
 * consumed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: marktime MARKER CMD [ARGS...]\n");
        return 2;
    }
    const char *marker = argv[1];
    size_t mlen = strlen(marker);
    int fds[2];
    if (pipe(fds) < 0) {
        perror("pipe");
        return 2;
    }
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    close(fds[1]);
    /* Keep the last mlen-1 bytes of the previous read so a marker split
     * across two reads is still found. */
    char buf[8192 + 256];
    size_t keep = 0;
    double marker_ms = -1;
    if (mlen == 0 || mlen > 256) {
        fprintf(stderr, "marktime: the marker must be 1..256 bytes\n");
        return 2;
    }
    for (;;) {
        ssize_t n = read(fds[0], buf + keep, 8192);
        if (n <= 0)
            break;
        size_t have = keep + (size_t)n;
        if (marker_ms < 0 && memmem(buf, have, marker, mlen))
            marker_ms = now_ms() - t0;
        keep = have < mlen - 1 ? have : mlen - 1;
        memmove(buf, buf + have - keep, keep);
    }
    int status = 0, ws;
    struct rusage ru;
    long rss = 0;
    double exit_ms = -1;
    pid_t p;
    while ((p = wait4(-1, &ws, 0, &ru)) > 0 || errno == EINTR) {
        if (p <= 0)
            continue;
        if (ru.ru_maxrss > rss)
            rss = ru.ru_maxrss;
        if (p == pid) {
            exit_ms = now_ms() - t0;
            status = ws;
        }
    }
    double gone_ms = now_ms() - t0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    printf("marker_ms=%.3f exit_ms=%.3f gone_ms=%.3f rss_kb=%ld status=%d\n", marker_ms, exit_ms,
           gone_ms, rss, code);
    return 0;
}
