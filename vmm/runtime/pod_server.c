/* The pod's side of a member's way in; see pod_server.h. */
#include "vmm/runtime/pod_server.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/runtime/container_oom.h"
#include "vmm/runtime/pod.h"
#include "vmm/runtime/pod_wire.h"
#include "vmm/sandbox/vm_proc.h"
#include "vmm/snapshot/disk_control.h"

struct pod_slot {
    bool busy;
    char serial[POD_SERIAL_MAX + 1];
    char name[65];
};

/* The guest pids the pod VM's kernel killed for memory, the latest
 * POD_OOM_KEPT: the pod's stand-in reads the guest's log for all its
 * members (the read takes what it reads). */
#define POD_OOM_KEPT 64

struct pod_server {
    int listen_fd;
    int control_fd;
    char agent_sock[PATH_MAX];
    unsigned nslots;
    pthread_mutex_t lock; /* the slots; and one control request at a time */
    struct pod_slot slots[POD_SPARE_DISKS];
    uint32_t oom_pids[POD_OOM_KEPT]; /* a ring, under lock */
    unsigned oom_next;
};

struct pod_conn {
    struct pod_server *s;
    int fd;
};

/* A free slot for serial and name, marked busy: its index, or -1 with
 * err (no room, or the name or serial taken). */
static int take_slot(struct pod_server *s, const char *serial, const char *name, char *err,
                     size_t cap)
{
    int free_slot = -1;
    pthread_mutex_lock(&s->lock);
    for (unsigned i = 0; i < s->nslots; i++) {
        struct pod_slot *sl = &s->slots[i];
        if (sl->busy && (!strcmp(sl->serial, serial) || !strcmp(sl->name, name))) {
            snprintf(err, cap, "container %.64s (disk %s) is in the pod already", name, serial);
            pthread_mutex_unlock(&s->lock);
            return -1;
        }
        if (!sl->busy && free_slot < 0)
            free_slot = (int)i;
    }
    if (free_slot < 0)
        snprintf(err, cap, "the pod has %u containers already, the most it can hold", s->nslots);
    else {
        struct pod_slot *sl = &s->slots[free_slot];
        sl->busy = true;
        snprintf(sl->serial, sizeof(sl->serial), "%s", serial);
        snprintf(sl->name, sizeof(sl->name), "%s", name);
    }
    pthread_mutex_unlock(&s->lock);
    return free_slot;
}

/* The member is gone: whatever is left of it in the guest goes, its root
 * is unmounted, then its slot is emptied (never before: the guest would
 * see its mounted disk shrink to nothing). */
static void end_member(struct pod_server *s, int slot)
{
    char msg[256], why[256] = "", files[128];
    int conn = vm_proc_dial(s->agent_sock);
    int e = conn < 0 ? conn
                     : agent_container_end(conn, s->slots[slot].name,
                                           AGENT_CONTAINER_END_WAIT_MS, why, sizeof(why));
    if (conn >= 0) {
        /* and what was copied in for it (pod_mounts.h), if anything */
        snprintf(files, sizeof(files), "%s/%s", POD_GUEST_FILES, s->slots[slot].name);
        agent_remove(conn, files, AGENT_REMOVE_F_RECURSIVE);
        close(conn);
    }
    pthread_mutex_lock(&s->lock);
    if (e && e != -ESRCH)
        fprintf(stderr, "airlock-runtime: container %.64s did not end in the pod's VM (%s): its "
                "disk stays in slot %d\n", s->slots[slot].name, why[0] ? why : strerror(-e), slot);
    else if ((e = vm_control_disk_empty(s->control_fd, (unsigned)slot, POD_CONTROL_MS, msg,
                                        sizeof(msg))))
        fprintf(stderr, "airlock-runtime: the pod's slot %d: %s\n", slot,
                e == -EIO ? msg : strerror(-e));
    else
        s->slots[slot].busy = false;
    pthread_mutex_unlock(&s->lock);
}

bool pod_server_oom_killed(struct pod_server *s, uint32_t pid)
{
    uint32_t got[POD_OOM_KEPT];
    bool yes = false;
    pthread_mutex_lock(&s->lock);
    int n = container_oom_killed(s->agent_sock, got, POD_OOM_KEPT);
    for (int i = 0; i < n; i++)
        s->oom_pids[s->oom_next++ % POD_OOM_KEPT] = got[i];
    for (unsigned i = 0; i < POD_OOM_KEPT && !yes; i++)
        yes = pid && s->oom_pids[i] == pid;
    pthread_mutex_unlock(&s->lock);
    return yes;
}

/* "OOM PID": whether the guest's kernel killed PID for memory ("YES" or
 * "NO"), the log read anew first. */
static void answer_oom(struct pod_server *s, int fd, const char *msg)
{
    unsigned long pid;
    char *end;
    if (strncmp(msg, "OOM ", 4) || (pid = strtoul(msg + 4, &end, 10)) == 0 || *end ||
        pid > UINT32_MAX) {
        pod_wire_send(fd, "ERR want OOM PID", NULL, 0);
        return;
    }
    pod_wire_send(fd, pod_server_oom_killed(s, (uint32_t)pid) ? "YES" : "NO", NULL, 0);
}

static void *serve_member(void *arg)
{
    struct pod_conn *pc = arg;
    struct pod_server *s = pc->s;
    int fd = pc->fd, fds[POD_WIRE_MAX_FDS], slot = -1;
    unsigned nfds = 0;
    free(pc);
    char msg[POD_WIRE_MAX], reply[POD_WIRE_MAX], err[200] = "", serial[64], name[80], tail;
    /* A member says what it wants at once: it is the runtime, not a
     * client that may dawdle. */
    int n = pod_wire_recv_fds(fd, msg, sizeof(msg), fds, &nfds, POD_CONTROL_MS);
    if (n <= 0) {
        close(fd);
        return NULL;
    }
    if (sscanf(msg, "FILL %63s %79s%c", serial, name, &tail) != 2 || nfds != 2 ||
        serial[0] == '.' || !agent_ctr_serial_ok(serial, strlen(serial)) ||
        !agent_ctr_name_ok(name, strlen(name)))
        snprintf(err, sizeof(err), "want FILL SERIAL NAME and two fds");
    else if ((slot = take_slot(s, serial, name, err, sizeof(err))) >= 0) {
        pthread_mutex_lock(&s->lock);
        int e = vm_control_disk_fill(s->control_fd, (unsigned)slot, serial, fds[0], fds[1], 0,
                                     POD_CONTROL_MS, err, sizeof(err));
        if (e) {
            if (e != -EIO)
                snprintf(err, sizeof(err), "the pod's VM: %s", strerror(-e));
            s->slots[slot].busy = false;
            slot = -1;
        }
        pthread_mutex_unlock(&s->lock);
    }
    for (unsigned i = 0; i < nfds; i++)
        close(fds[i]);
    if (slot < 0)
        snprintf(reply, sizeof(reply), "ERR %s", err);
    else
        snprintf(reply, sizeof(reply), "OK %d", slot);
    pod_wire_send(fd, reply, NULL, 0);
    if (slot >= 0) {
        /* the member's questions, if any; the connection's end is its */
        while ((n = pod_wire_recv(fd, msg, sizeof(msg), 0)) > 0 || n == -EPROTO)
            if (n > 0)
                answer_oom(s, fd, msg);
        end_member(s, slot);
    }
    close(fd);
    return NULL;
}

static void *accept_members(void *arg)
{
    struct pod_server *s = arg;
    for (;;) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE)
                continue;
            return NULL;
        }
        struct ucred cr;
        socklen_t cl = sizeof(cr);
        struct pod_conn *pc = malloc(sizeof(*pc));
        pthread_t t;
        pthread_attr_t at;
        if (!pc || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 ||
            cr.uid != geteuid() || pthread_attr_init(&at)) {
            free(pc);
            close(fd);
            continue;
        }
        pc->s = s;
        pc->fd = fd;
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, 256 << 10);
        if (pthread_create(&t, &at, serve_member, pc)) {
            free(pc);
            close(fd);
        }
        pthread_attr_destroy(&at);
    }
}

int pod_server_start(const char *dir, const char *agent_sock, int control_fd, unsigned slots,
                     struct pod_server **out, char *err, size_t cap)
{
    struct pod_server *s = calloc(1, sizeof(*s));
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (!s)
        return snprintf(err, cap, "out of memory"), -1;
    s->control_fd = control_fd;
    s->nslots = slots < POD_SPARE_DISKS ? slots : POD_SPARE_DISKS;
    snprintf(s->agent_sock, sizeof(s->agent_sock), "%s", agent_sock);
    pthread_mutex_init(&s->lock, NULL);
    if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, POD_SOCK) >=
        (int)sizeof(sa.sun_path)) {
        free(s);
        return snprintf(err, cap, "%.200s: too long for the pod's socket", dir), -1;
    }
    pthread_t t;
    if ((s->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0 ||
        bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(s->listen_fd, 16) < 0 || pthread_create(&t, NULL, accept_members, s)) {
        snprintf(err, cap, "the pod's socket %.200s: %s", sa.sun_path, strerror(errno));
        if (s->listen_fd >= 0)
            close(s->listen_fd);
        free(s);
        return -1;
    }
    pthread_detach(t);
    *out = s; /* it lives as long as the stand-in */
    return 0;
}
