#include "vmm/cli/run_control.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli/session.h"
#include "vmm/cli/session_snapshot.h"
#include "vmm/cli/spare_disks.h"
#include "vmm/jail/seccomp.h"
#include "vmm/kvm/vm.h"
#include "vmm/snapshot/snapshot_control.h"
#include "vmm/util/exit_codes.h"

/* The files of one request as a snapshot's outputs: state, memory, then
 * one overlay per copy-on-write disk.  false with err when they do not
 * match this VM's disks. */
static bool outputs(const struct boot_session *s, const int *fds, unsigned n,
                    struct snap_out *o, char *err, size_t cap)
{
    *o = (struct snap_out){.state_fd = fds[0], .memory_fd = fds[1]};
    unsigned k = 2, want = 2;
    for (unsigned i = 0; i < LAYOUT_VIRTIO_SLOTS; i++)
        o->overlay_fd[i] = -1;
    for (unsigned i = 0; i < s->opt.ndisks; i++)
        if (disk_is_cow(s->disks[i])) {
            want++;
            if (k < n)
                o->overlay_fd[i] = fds[k++];
        }
    if (n == want)
        return true;
    snprintf(err, cap, "want %u files (state, memory and one per copy-on-write disk), got %u",
             want, n);
    return false;
}

/* --secret: the CREDENTIALS payload for the agent, which the daemon sends
 * it (the placeholders and the CA; never a value: the broker has those). */
static void answer_credentials(struct run_ctx *r)
{
    static unsigned char payload[SNAP_CONTROL_CRED_MAX];
    struct agent_cred c = {.env = r->secret_envp, .envc = r->egress_cfg.secrets.n,
                           .pem = r->ca_pem, .pem_len = r->ca_pem_len};
    ssize_t n = r->egress_cfg.secrets.n ? agent_cred_payload(payload + 2, sizeof(payload) - 2, &c)
                                        : -ENOENT;
    if (n < 0)
        snap_control_answer(r->control_fd, n == -ENOENT ? "this sandbox has no secrets"
                                                        : "cannot encode the credentials");
    else
        snap_control_credentials_answer(r->control_fd, payload, (size_t)n);
}

/* Each request: pause, save, resume (not after SNAPSHOT-STOP's save),
 * answer.  The guest sees a pause of however long the save takes (its
 * kvm-clock runs on).  A disk request fills or empties a spare slot
 * (spare_disks.c) without a pause.  This thread, not the event loop,
 * serves them all, one at a time. */
static void *control_thread(void *arg)
{
    struct run_ctx *r = arg;
    int e = seccomp_apply(SECCOMP_SNAPSHOT);
    if (e) {
        vm_stop(r->vm, EXIT_AIRLOCK_ERROR, "cannot install the seccomp filter: %s", strerror(-e));
        return NULL;
    }
    for (;;) {
        int fds[SNAP_CONTROL_MAX_FDS];
        unsigned n = 0;
        char text[SNAP_CONTROL_TEXT_MAX];
        size_t tlen = 0;
        int rc = snap_control_next(r->control_fd, fds, &n, text, &tlen);
        if (rc == -EPROTO) {
            snap_control_answer(r->control_fd, "not a request (SNAPSHOT, SNAPSHOT-STOP, RESUME, "
                                               "CREDENTIALS, DISK-FILL or DISK-EMPTY)");
            continue;
        }
        if (rc <= 0)
            return NULL; /* the daemon is gone: it stops the VM too */
        if (rc == SNAP_CONTROL_CREDENTIALS) {
            answer_credentials(r);
            continue;
        }
        if (rc == SNAP_CONTROL_RESUME) {
            vm_resume(r->vm);
            snap_control_answer(r->control_fd, NULL);
            continue;
        }
        char err[384];
        struct snap_out o;
        const char *why = NULL;
        int filled = spare_disks_first_filled(r->session);
        if (rc == SNAP_CONTROL_DISK) {
            why = spare_disks_request(r->session, text, tlen, fds, n, err, sizeof(err));
        } else if (filled >= 0) {
            /* Its disk is not the VM's to describe in a snapshot (it came
             * as fds and its overlay is the daemon's file): refused, not
             * left out. */
            snprintf(err, sizeof(err), "a container disk is attached to slot %d", filled);
            why = err;
        } else if (!outputs(r->session, fds, n, &o, err, sizeof(err))) {
            why = err;
        } else {
            e = session_snapshot_save(r->session, &o, err, sizeof(err));
            if (e || rc != SNAP_CONTROL_SNAPSHOT_STOP)
                vm_resume(r->vm); /* else it stays as saved until the daemon ends it */
            why = e ? err : NULL;
        }
        for (unsigned i = 0; i < n; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        snap_control_answer(r->control_fd, why);
    }
}

int run_control_start(struct run_ctx *r)
{
    pthread_t t;
    int e = pthread_create(&t, NULL, control_thread, r);
    if (!e)
        pthread_detach(t);
    return e;
}
