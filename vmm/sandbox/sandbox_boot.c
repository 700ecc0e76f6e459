#include "vmm/sandbox/sandbox_boot.h"
#include "vmm/sandbox/sandbox_ports.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/sandbox/api_fields.h"
#include "vmm/sandbox/sandbox_audit.h"
#include "vmm/sandbox/vm_proc.h"
#include "vmm/util/exit_codes.h"

/* The files of a sandbox's folder, then the folder. */
static void remove_dir(const struct sandbox *sb)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/vm.log", sb->dir);
    unlink(p);
    snprintf(p, sizeof(p), "%s/%s", sb->dir, SANDBOX_AUDIT_FILE);
    unlink(p);
    unlink(sb->sock); /* the VM removes it; not when it was killed */
    rmdir(sb->dir);
}

/* The one-line reason a VM process gave on stderr ("airlock: ..."), and
 * the create field it is about (the flag it names). */
static void vm_reason(const struct sandbox *sb, off_t from, char *msg, size_t cap,
                      const char **field)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/vm.log", sb->dir);
    msg[0] = '\0';
    *field = NULL;
    FILE *f = fopen(p, "re");
    if (!f)
        return;
    /* This VM's lines only: a resumed sandbox's log holds its earlier VMs'. */
    if (fseeko(f, from, SEEK_SET)) {
        fclose(f);
        return;
    }
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "airlock: ", 9))
            continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(msg, cap, "%.500s", line + 9);
        static const struct { const char *flag, *field; } map[] = {
            {"--allow-ip", "allow_ip"}, {"--allow", "allow"}, {"--image", "image"},
            {"--mem", "mem"}, {"--cpus", "cpus"}, {"--append", "append"},
            {"--disk-cap", "disk_cap_mib"}, {"--cpu-quota", "cpu_quota_pct"},
            {"--egress-max-conns", "egress_max_conns"}, {"--egress-max-mib", "egress_max_mib"},
            {"--egress-rate", "egress_rate"}, {"--secret", "secrets"}, {"secret ", "secrets"},
            {"--ca-file", "ca_file"}, {"--mount", "mounts"},
        };
        for (size_t i = 0; i < sizeof(map) / sizeof(map[0]) && !*field; i++)
            if (!strncmp(msg, map[i].flag, strlen(map[i].flag)))
                *field = map[i].field;
        break;
    }
    fclose(f);
}

/* argv for `airlock sandbox-vm`; strings point into `b` and `sb`. */
static int vm_argv(const struct sandbox *sb, const struct sandbox_boot_req *b,
                   const char *audit_path, char **argv, size_t cap, char num[3][24])
{
    size_t n = 0;
    json_t *e;
    size_t i;
    argv[n++] = "airlock";
    argv[n++] = "sandbox-vm";
    argv[n++] = "--vsock-uds";
    argv[n++] = (char *)sb->sock;
    argv[n++] = "--audit";
    argv[n++] = (char *)audit_path;
    argv[n++] = "--audit-id";
    argv[n++] = (char *)sb->id;
    argv[n++] = "--control-fd";
    argv[n++] = VM_PROC_CONTROL_FD_TEXT;
    /* The channel's end comes after the secrets' pipes (sandbox_boot). */
    snprintf(num[2], 24, "%u", VM_PROC_EXTRA_FD + (b->secrets ? b->secrets->nfds : 0));
    argv[n++] = "--egress-control-fd";
    argv[n++] = num[2];
    if (b->from_snapshot) { /* the snapshot fixed the image, memory and vCPUs */
        argv[n++] = "--from-snapshot";
        argv[n++] = (char *)b->from_snapshot;
        if (b->cold)
            argv[n++] = "--cold-boot";
    } else {
        argv[n++] = b->root_disk ? "--root-disk" : "--image";
        argv[n++] = b->root_disk ? (char *)b->root_disk : (char *)sb->image;
        snprintf(num[0], 24, "%u", sb->mem_mib);
        snprintf(num[1], 24, "%u", sb->cpus);
        argv[n++] = "--mem";
        argv[n++] = num[0];
        argv[n++] = "--cpus";
        argv[n++] = num[1];
    }
    if (b->append) {
        argv[n++] = "--append";
        argv[n++] = (char *)b->append;
    }
    for (const char *const *l = b->limits; l && *l; l += 2) {
        argv[n++] = (char *)l[0];
        argv[n++] = (char *)l[1];
    }
    json_array_foreach(b->allow, i, e) {
        if (n + 3 > cap)
            return -E2BIG;
        argv[n++] = "--allow";
        argv[n++] = (char *)json_string_value(e);
    }
    json_array_foreach(b->allow_ip, i, e) {
        if (n + 3 > cap)
            return -E2BIG;
        argv[n++] = "--allow-ip";
        argv[n++] = (char *)json_string_value(e);
    }
    for (unsigned k = 0; b->secrets && k < b->secrets->n; k++) {
        if (n + 3 > cap)
            return -E2BIG;
        argv[n++] = "--secret";
        argv[n++] = (char *)b->secrets->spec[k];
    }
    /* a volume is its own file as a --disk (the VM puts those before the
     * --mount ones: create_mounts.h), a folder a --mount, once for all
     * its targets (create_mounts_owner) */
    for (unsigned k = 0; b->mounts && k < b->mounts->n; k++) {
        if (create_mounts_owner(b->mounts, k) != k)
            continue;
        if (n + 3 > cap)
            return -E2BIG;
        argv[n++] = b->mounts->volume[k] ? "--disk" : "--mount";
        argv[n++] = (char *)b->mounts->spec[k];
    }
    if (b->ca_file && n + 3 <= cap) {
        argv[n++] = "--ca-file";
        argv[n++] = (char *)b->ca_file;
    }
    argv[n] = NULL;
    return 0;
}

static void close_control(struct sandbox *sb)
{
    if (sb->control_fd >= 0)
        close(sb->control_fd);
    sb->control_fd = -1;
    /* A change of its allowlist may be using it (sandbox_egress.c). */
    pthread_mutex_lock(&sb->egress_lock);
    if (sb->egress_fd >= 0)
        close(sb->egress_fd);
    sb->egress_fd = -1;
    pthread_mutex_unlock(&sb->egress_lock);
}

/* The VM process, with the secrets' pipes and then the broker's
 * allowlist channel as its extra fds (the numbers vm_argv gave them). */
static pid_t spawn(char **argv, int log_fd, int control, const struct create_secrets *secrets,
                   int egress)
{
    _Static_assert(CREATE_SECRETS_MAX + 1 <= VM_PROC_MAX_EXTRA, "room for every pipe and the channel");
    int extra[VM_PROC_MAX_EXTRA];
    unsigned n = 0;
    for (unsigned i = 0; secrets && i < secrets->nfds; i++)
        extra[n++] = secrets->fds[i];
    extra[n++] = egress;
    return vm_proc_spawn(argv, log_fd, control, extra, n);
}

int sandbox_boot(const char *run_dir, struct sandbox *sb, const struct sandbox_boot_req *b,
                 char *err, size_t cap, const char **field)
{
    *field = NULL;
    err[0] = '\0';
    int dl = snprintf(sb->dir, sizeof(sb->dir), "%s/%s", run_dir, sb->id);
    int sl = snprintf(sb->sock, sizeof(sb->sock), "%s/%s/agent.sock", run_dir, sb->id);
    char *argv[47 + 4 * FIELD_MAX_LIST + 2 * CREATE_SECRETS_MAX + 2 * CREATE_MOUNTS_MAX + 1];
    char num[3][24];
    char log[PATH_MAX + 16], audit[PATH_MAX + 16];
    snprintf(log, sizeof(log), "%s/vm.log", sb->dir);
    snprintf(audit, sizeof(audit), "%s/%s", sb->dir, SANDBOX_AUDIT_FILE);
    int log_fd = -1, status = 0, e = 0, control[2] = {-1, -1}, egress[2] = {-1, -1};
    pid_t pid = -1;
    off_t log_start = 0;
    /* A VM killed outright left its socket behind, which the next one
     * could not bind. */
    if (b->resume && sl < (int)sizeof(sb->sock))
        unlink(sb->sock);
    if (dl >= (int)sizeof(sb->dir) || sl >= (int)sizeof(sb->sock) ||
        (!b->resume && mkdir(sb->dir, 0700) < 0) ||
        (log_fd = open(log, O_WRONLY | O_CREAT | O_CLOEXEC | (b->resume ? O_APPEND : O_TRUNC),
                       0600)) < 0 ||
        (!b->resume && (e = sandbox_audit_open(sb))))
        snprintf(err, cap, "cannot make the sandbox's folder %.400s: %s", sb->dir,
                 strerror(e ? -e : errno));
    else if ((log_start = lseek(log_fd, 0, SEEK_END)) < 0)
        snprintf(err, cap, "cannot read the sandbox's log: %s", strerror(errno));
    else if (vm_argv(sb, b, audit, argv, sizeof(argv) / sizeof(argv[0]), num) < 0)
        snprintf(err, cap, "too many allow rules");
    else if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, control) < 0 ||
             socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, egress) < 0)
        snprintf(err, cap, "cannot make the sandbox's control sockets: %s", strerror(errno));
    else if ((pid = spawn(argv, log_fd, control[1], b->secrets, egress[1])) < 0)
        snprintf(err, cap, "cannot start the sandbox's VM: %s", strerror((int)-pid));
    if (log_fd >= 0)
        close(log_fd);
    if (control[1] >= 0)
        close(control[1]);
    if (egress[1] >= 0)
        close(egress[1]);
    sb->control_fd = control[0];
    sb->egress_fd = egress[0];
    int rc = err[0] ? -1 : vm_proc_wait_ready(pid, sb->sock, SANDBOX_READY_MS, &status, err, cap);
    if (!rc && b->mounts && b->mounts->n && create_mounts_deliver(sb, b->mounts, err, cap)) {
        rc = -1;
        *field = "mounts";
    }
    if (!rc && b->secrets && b->secrets->n)
        rc = create_secrets_deliver(sb, err, cap);
    if (!rc) {
        sb->pid = pid;
        return 0;
    }
    /* a mount the guest refused (a link in the image on its way) is the
     * client's input, as what the VM refuses below */
    int http = *field ? 400 : 500;
    if (rc == -ECHILD && WIFEXITED(status) && WEXITSTATUS(status) == EXIT_AIRLOCK_ERROR) {
        char reason[512];
        vm_reason(sb, log_start, reason, sizeof(reason), field);
        if (reason[0]) { /* the VM refused what it was given: the client's input */
            snprintf(err, cap, "%s", reason);
            http = *field ? 400 : 500;
        }
    }
    if (pid > 0)
        vm_proc_stop(pid, SANDBOX_STOP_MS);
    close_control(sb);
    if (!b->resume) {
        sandbox_audit_close(sb);
        remove_dir(sb);
    }
    return http;
}

int sandbox_sync(struct sandbox *sb, char *why, size_t cap)
{
    int fd = vm_proc_dial(sb->sock); /* fails at once when the VM is gone */
    if (fd < 0) {
        snprintf(why, cap, "its agent does not answer: %s", strerror(-fd));
        return fd;
    }
    int e = agent_sync(fd, AGENT_SYNC_WAIT_MS, why, cap);
    close(fd);
    return e;
}

/* A read-write volume's writes still in the guest's page cache reach its
 * file before the VM is stopped (SIGTERM ends it at once, no shutdown).
 * A guest that does not answer (wedged, or its agent killed) loses what
 * it had not written back; e2fsck repairs the rest at the next attach. */
static void sync_volumes(struct sandbox *sb)
{
    char why[256];
    if (sb->volume_rw && sb->pid > 0)
        sandbox_sync(sb, why, sizeof(why));
}

void sandbox_vm_stop(struct sandbox *sb)
{
    sync_volumes(sb);
    if (sb->pid > 0)
        vm_proc_stop(sb->pid, SANDBOX_STOP_MS);
    sb->pid = 0;
    close_control(sb);
}

void sandbox_teardown(struct sandbox *sb)
{
    sandbox_ports_close(sb); /* its records go to its audit, still open */
    sandbox_vm_stop(sb);
    sandbox_audit_close(sb);
    remove_dir(sb);
}
