/* `airlock run -- CMD`: a fresh VM per command.  It boots the default
 * kernel with the image as a copy-on-write root and the guest agent as
 * PID 1, connects to the agent over vsock, runs CMD there with our stdout
 * and stderr (and stdin with -i), and exits with CMD's status; the VM and
 * every write it made are gone afterwards. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "vmm/audit/audit.h"
#include "vmm/audit/limits.h"
#include "vmm/cli/commands.h"
#include "vmm/cli/run_ctx.h"
#include "vmm/cli/run_mounts.h"
#include "vmm/cli/run_options.h"
#include "vmm/egress/egress.h"
#include "vmm/egress/egress_broker.h"
#include "vmm/jail/jail.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/nbfd.h"

static int usage_error(const char *msg)
{
    fprintf(stderr, "airlock: %s (see airlock run --help)\n", msg);
    return EXIT_AIRLOCK_ERROR;
}

static int fail(const char *what, int e)
{
    fprintf(stderr, "airlock: %s: %s\n", what, strerror(e));
    return EXIT_AIRLOCK_ERROR;
}

/* --audit FILE, and where limit records go.  Before the VM (and any
 * thread) exists, like the broker. */
static int open_audit(struct run_ctx *r, const struct run_args *a)
{
    int e = a->audit_path ? audit_open(&r->audit, a->audit_path) : (audit_none(&r->audit), 0);
    if (!e && a->audit_id && audit_set_id(&r->audit, a->audit_id)) {
        char msg[128];
        snprintf(msg, sizeof(msg), "--audit-id '%.40s': want 16 hex digits", a->audit_id);
        return usage_error(msg);
    }
    if (e) {
        char msg[PATH_MAX + 64];
        snprintf(msg, sizeof(msg), "--audit %s: %s", a->audit_path, strerror(-e));
        return usage_error(msg);
    }
    limits_set_audit(&r->audit);
    return 0;
}

/* --secret: the values are read here, each secret's host:port joins the
 * allowlist, and the guest's environment gets the placeholders. */
static int load_secrets(struct run_ctx *r)
{
    struct egress_config *eg = &r->egress_cfg;
    char err[1024];
    if (!eg->secrets.n)
        return 0;
    int e = secret_load_all(&eg->secrets, err, sizeof(err));
    /* An fd: source was read and closed: its number may now be reused
     * (the broker's socket), which the jail must not close as inherited. */
    for (unsigned i = 0; i < eg->secrets.n; i++)
        if (!strncmp(eg->secrets.s[i].source, "fd:", 3))
            jail_keep_fd(atoi(eg->secrets.s[i].source + 3));
    if (e)
        return usage_error(err);
    for (unsigned i = 0; i < eg->secrets.n; i++) {
        const struct secret *s = &eg->secrets.s[i];
        char rule[EGRESS_HOST_MAX + 16], why[200];
        secret_host_port(s, rule, sizeof(rule));
        if (!egress_match_name(&eg->policy, s->host, s->port) &&
            egress_policy_add_host(&eg->policy, rule, why, sizeof(why))) {
            snprintf(err, sizeof(err), "--secret %s: host %s: %s", s->name, rule, why);
            return usage_error(err);
        }
        /* NAME=placeholder; both fit (secret.h's bounds) */
        size_t nl = strlen(s->name);
        memcpy(r->secret_env[i], s->name, nl);
        r->secret_env[i][nl] = '=';
        memcpy(r->secret_env[i] + nl + 1, s->placeholder, s->len + 1);
        r->secret_envp[i] = r->secret_env[i];
    }
    return 0;
}

/* The broker is forked here, while the process has one thread.  With
 * secrets it keeps their values; ours are wiped once it has them.  A
 * sandbox's VM (--egress-control-fd) always has one, since its allowlist
 * may change: the broker then takes the channel the changes come on. */
static int start_egress(struct run_ctx *r)
{
    struct egress_config *eg = &r->egress_cfg;
    static struct egress_broker_creds creds;
    int e, live = r->egress_update_fd;
    r->broker = -1;
    r->egress_update_fd = -1; /* the broker's from here on, whatever happens */
    creds = (struct egress_broker_creds){.secrets = &eg->secrets, .ca_file = eg->ca_file,
                                         .audit = &r->audit};
    if ((eg->policy.n || live >= 0) &&
        (e = egress_broker_start(&eg->policy, &creds, live, &r->broker))) {
        secret_wipe(&eg->secrets);
        if (creds.err[0])
            return usage_error(creds.err);
        return fail("cannot start the egress broker", -e);
    }
    secret_wipe(&eg->secrets);
    r->ca_pem = creds.ca_pem;
    r->ca_pem_len = creds.ca_pem_len;
    if (egress_init(&r->egress, eg, &r->audit, r->broker))
        return fail("egress", ENOMEM);
    return 0;
}

/* What the run thread needs that the jail would forbid later: the guest's
 * fresh entropy, the eventfd the agent's readiness arrives on, and our
 * output's non-blocking twins. */
static int prepare_agent(struct run_ctx *r)
{
    if (getrandom(r->seed, sizeof(r->seed), 0) != (ssize_t)sizeof(r->seed))
        return fail("getrandom", errno);
    r->ready_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (r->ready_efd < 0)
        return fail("eventfd", errno);
    /* Our stdout/stderr, written without blocking (a stalled reader must
     * not keep a signal or --timeout from ending us); opened before the
     * jail, which allows no open() later. */
    if ((r->out_fd = nbfd_twin(STDOUT_FILENO)) < 0)
        r->out_fd = STDOUT_FILENO;
    if ((r->err_fd = nbfd_twin(STDERR_FILENO)) < 0)
        r->err_fd = STDERR_FILENO;
    return 0;
}

/* The steps, in order: parse, the VM's kernel and disks, the command,
 * audit, egress, the agent's inputs, then the session runs the VM. */
static int run_main(int argc, char **argv, enum run_mode mode)
{
    static struct run_ctx r;
    static struct run_args a;
    char err[PATH_MAX + 300];
    r.mode = mode;
    int e = run_options_parse(&r, &a, argc, argv, err, sizeof(err));
    if (e)
        return e > 0 ? 0 : usage_error(err);
    if (run_options_vm(&r, &a, err, sizeof(err)) ||
        run_mounts_attach(&r.mounts, &a.vm, r.state_dir, err, sizeof(err)) ||
        run_options_agent_disk(&r, &a, err, sizeof(err)) ||
        run_options_request(&r, &a, argc, argv, err, sizeof(err)) ||
        /* -t: the guest terminal's size, and the pipe its changes take */
        run_tty_prepare(&r.tty, &r.req, r.with_stdin, err, sizeof(err)))
        return usage_error(err);
    if ((e = open_audit(&r, &a)) || (e = load_secrets(&r)) || (e = start_egress(&r)) ||
        (e = prepare_agent(&r)))
        return e;
    struct session_hook hook = run_hook_template;
    hook.opaque = &r;
    hook.parent_unpacks = r.ncopy_out > 0; /* a copy-out may be a folder */
    return vm_session(&a.vm, &hook);
}

int cmd_run(int argc, char **argv)
{
    return run_main(argc, argv, RUN_EXEC);
}

int cmd_snapshot(int argc, char **argv)
{
    return run_main(argc, argv, RUN_SNAPSHOT);
}

int cmd_sandbox_vm(int argc, char **argv)
{
    return run_main(argc, argv, RUN_HOLD);
}
