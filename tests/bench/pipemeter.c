/* pipemeter: bulk-transfer throughput, for tests/bench/lab-vsock.
 *
 *   pipemeter recv -- CMD...      runs CMD and times its stdout from the
 *                                 first byte to EOF
 *   pipemeter send BYTES -- CMD...  runs CMD, waits for "ready\n" on its
 *                                 stdout, writes BYTES to its stdin, closes
 *                                 it, and stops the clock at "done\n" (CMD
 *                                 says so once it has read everything)
 *   pipemeter socketpair BYTES    the same volume through an AF_UNIX stream
 *                                 socketpair between two local processes
 *   pipemeter uds-recv SOCK -- CMD...  listens on the Unix socket SOCK, runs
 *                                 CMD and times the one connection it accepts
 *                                 from the first byte to EOF, then closes it
 *                                 (so the sender knows all arrived); for a
 *                                 guest reaching CID 2 through --vsock-uds
 *   pipemeter uds-send UDS PORT BYTES -- CMD...  runs CMD, waits for
 *                                 "ready\n" on its stdout, connects to the
 *                                 hybrid-vsock socket UDS ("CONNECT PORT\n",
 *                                 "OK ...\n"), writes BYTES, half-closes, and
 *                                 stops the clock at the peer's reply: the
 *                                 byte count it read, as a decimal line
 *
 * Prints one line: "bytes=N ms=T MBps=R status=S".  The start of the clock
 * excludes the VM's boot (first byte / "ready"), so the figure is the
 * stream's own rate end to end.  Figures only: nothing asserts on them. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_bytes(int fd, unsigned long long total)
{
    static char buf[CHUNK];
    memset(buf, 'a', sizeof(buf));
    while (total) {
        size_t n = total < sizeof(buf) ? (size_t)total : sizeof(buf);
        if (write_all(fd, buf, n))
            return -1;
        total -= n;
    }
    return 0;
}

/* One line from fd (byte by byte: nothing past it is consumed) into buf
 * without its newline, cut to cap - 1 bytes.  Its length, or -1 at EOF. */
static ssize_t read_line(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    for (;;) {
        char ch;
        ssize_t n = read(fd, &ch, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        if (ch == '\n') {
            buf[len] = 0;
            return (ssize_t)len;
        }
        if (len < cap - 1)
            buf[len++] = ch;
    }
}

/* Reads fd until `line` arrives (or EOF: -1). */
static int wait_line(int fd, const char *line)
{
    char buf[256];
    while (read_line(fd, buf, sizeof(buf)) >= 0)
        if (!strcmp(buf, line))
            return 0;
    return -1;
}

static pid_t spawn(char **argv, int *in, int *out)
{
    int i[2], o[2];
    if (pipe(i) || pipe(o))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(i[0], 0);
        dup2(o[1], 1);
        close(i[0]), close(i[1]), close(o[0]), close(o[1]);
        execvp(argv[0], argv);
        perror(argv[0]);
        _exit(127);
    }
    close(i[0]);
    close(o[1]);
    *in = i[1];
    *out = o[0];
    return pid;
}

static int finish(unsigned long long bytes, double t0, double t1, pid_t pid)
{
    int ws = 0;
    if (pid > 0)
        waitpid(pid, &ws, 0);
    int st = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    double ms = t1 - t0;
    printf("bytes=%llu ms=%.1f MBps=%.1f status=%d\n", bytes, ms,
           ms > 0 ? bytes / 1e6 / (ms / 1e3) : 0.0, st);
    return 0;
}

/* Reads fd to its end; the times of the first and last byte go to t0/t1
 * (when given).  Returns the byte count. */
static unsigned long long drain(int fd, double *t0, double *t1)
{
    static char buf[CHUNK];
    unsigned long long got = 0;
    double first = 0, last = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (!got)
            first = now_ms();
        got += (unsigned long long)n;
        last = now_ms();
    }
    if (t0)
        *t0 = first;
    if (t1)
        *t1 = last;
    return got;
}

static int do_recv(char **argv)
{
    int in, out;
    pid_t pid = spawn(argv, &in, &out);
    if (pid < 0)
        return perror("spawn"), 2;
    close(in);
    double t0, t1;
    unsigned long long got = drain(out, &t0, &t1);
    return finish(got, t0, t1, pid);
}

static int do_send(unsigned long long total, char **argv)
{
    int in, out;
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = spawn(argv, &in, &out);
    if (pid < 0)
        return perror("spawn"), 2;
    if (wait_line(out, "ready"))
        return fprintf(stderr, "pipemeter: no \"ready\" from the command\n"), finish(0, 0, 0, pid);
    double t0 = now_ms();
    int rc = send_bytes(in, total);
    close(in);
    if (rc || wait_line(out, "done"))
        return fprintf(stderr, "pipemeter: the command did not take it all\n"), finish(0, 0, 0, pid);
    return finish(total, t0, now_ms(), pid);
}

static int do_socketpair(unsigned long long total)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        return perror("socketpair"), 2;
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        _exit(send_bytes(sv[1], total) ? 1 : 0);
    }
    close(sv[1]);
    static char buf[CHUNK];
    unsigned long long got = 0;
    ssize_t n;
    while ((n = read(sv[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
        got += n > 0 ? (unsigned long long)n : 0;
    return finish(got, t0, now_ms(), pid);
}

static int uds_addr(const char *path, struct sockaddr_un *a)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(a->sun_path))
        return -1;
    strcpy(a->sun_path, path);
    return 0;
}

static int do_uds_recv(const char *path, char **argv)
{
    struct sockaddr_un a;
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    if (l < 0 || uds_addr(path, &a) || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
        return perror(path), 2;
    int in, out;
    pid_t pid = spawn(argv, &in, &out);
    if (pid < 0)
        return perror("spawn"), 2;
    close(in);
    /* The command's stdout is not read while the connection runs: it only
     * carries what the guest prints, a line or two. */
    int c = accept(l, NULL, NULL);
    close(l);
    unlink(path);
    double t0 = 0, t1 = 0;
    unsigned long long got = c < 0 ? 0 : drain(c, &t0, &t1);
    if (c >= 0)
        close(c);
    drain(out, NULL, NULL);
    return finish(got, t0, t1, pid);
}

/* Connects to the hybrid-vsock socket and does Firecracker's handshake. */
static int uds_connect(const char *path, const char *port)
{
    struct sockaddr_un a;
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0 || uds_addr(path, &a) || connect(s, (struct sockaddr *)&a, sizeof(a)))
        return perror(path), -1;
    char line[64];
    int n = snprintf(line, sizeof(line), "CONNECT %s\n", port);
    if (write_all(s, line, (size_t)n) || read_line(s, line, sizeof(line)) < 0 ||
        strncmp(line, "OK ", 3))
        return fprintf(stderr, "pipemeter: no OK from %s\n", path), close(s), -1;
    return s;
}

static int do_uds_send(const char *path, const char *port, unsigned long long total, char **argv)
{
    int in, out;
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = spawn(argv, &in, &out);
    if (pid < 0)
        return perror("spawn"), 2;
    close(in);
    if (wait_line(out, "ready"))
        return fprintf(stderr, "pipemeter: no \"ready\" from the command\n"), finish(0, 0, 0, pid);
    int s = uds_connect(path, port);
    if (s < 0)
        return finish(0, 0, 0, pid);
    double t0 = now_ms();
    int rc = send_bytes(s, total);
    shutdown(s, SHUT_WR);
    char got[32] = "";
    ssize_t n = rc ? -1 : read_line(s, got, sizeof(got));
    double t1 = now_ms();
    close(s);
    char tail[256];
    while (read(out, tail, sizeof(tail)) > 0)
        ;
    if (n <= 0 || strtoull(got, NULL, 10) != total)
        return fprintf(stderr, "pipemeter: the peer did not take it all (%s)\n", got),
               finish(0, 0, 0, pid);
    return finish(total, t0, t1, pid);
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "recv") && !strcmp(argv[2], "--"))
        return do_recv(argv + 3);
    if (argc >= 5 && !strcmp(argv[1], "send") && !strcmp(argv[3], "--"))
        return do_send(strtoull(argv[2], NULL, 10), argv + 4);
    if (argc >= 5 && !strcmp(argv[1], "uds-recv") && !strcmp(argv[3], "--"))
        return do_uds_recv(argv[2], argv + 4);
    if (argc >= 7 && !strcmp(argv[1], "uds-send") && !strcmp(argv[5], "--"))
        return do_uds_send(argv[2], argv[3], strtoull(argv[4], NULL, 10), argv + 6);
    if (argc == 3 && !strcmp(argv[1], "socketpair"))
        return do_socketpair(strtoull(argv[2], NULL, 10));
    fprintf(stderr, "usage: pipemeter recv -- CMD... | send BYTES -- CMD... | socketpair BYTES\n"
                    "       | uds-recv SOCK -- CMD... | uds-send UDS PORT BYTES -- CMD...\n");
    return 2;
}
