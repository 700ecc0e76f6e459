/* `airlock update ID --allow ... --allow-ip ... --timeout S`: a running
 * sandbox's egress allowlist and lease changed (PATCH /v1/sandboxes/{id},
 * docs/sandboxes.md).  The rules are checked here first with the parser
 * the VM uses, so a typo is one line naming the flag before any daemon is
 * asked. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/commands.h"
#include "vmm/cli/sandbox_options.h"
#include "vmm/cli/verb_api.h"
#include "vmm/egress/egress_policy.h"
#include "vmm/sandbox/api_client.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/parse.h"

#define UPDATE_USAGE                                                                            \
    "usage: airlock update [--allow HOST[:PORT]]... [--allow-ip CIDR[:PORT]]... [--no-egress]\n" \
    "                      [--timeout S] [--socket PATH] ID\n"                                 \
    "Changes a running sandbox.  --allow and --allow-ip each replace that list of its\n"       \
    "egress allowlist (the other stays); --no-egress empties both.  Connections open to\n"    \
    "what the new list does not admit are closed.  --timeout is a new lease, from now.\n"     \
    "Prints the id.  docs/sandboxes.md.\n"

/* Each rule as the VM parses it: 0, or 125 after one line naming it. */
static int check_rules(json_t *list, bool ip, struct egress_policy *p)
{
    size_t i;
    json_t *e;
    p->n = 0;
    json_array_foreach(list, i, e) {
        char why[200];
        const char *rule = json_string_value(e);
        int rc = ip ? egress_policy_add_cidr(p, rule, why, sizeof(why))
                    : egress_policy_add_host(p, rule, why, sizeof(why));
        if (rc)
            return verb_fail("%s '%.200s': %s", ip ? "--allow-ip" : "--allow", rule, why);
    }
    return 0;
}

static int parse(int argc, char **argv, json_t *body, const char **sock_flag, const char **id)
{
    static const struct option opts[] = {
        {"socket", required_argument, NULL, 'S'}, {"allow", required_argument, NULL, 'a'},
        {"allow-ip", required_argument, NULL, 'A'}, {"no-egress", no_argument, NULL, 'n'},
        {"timeout", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
        {0},
    };
    json_t *allow = json_array(), *allow_ip = json_array();
    bool no_egress = false;
    int c, rc = 0;
    uint64_t v;
    optind = 0;
    opterr = 0;
    /* No '+': options may follow the id (`airlock update ID --allow ...`). */
    while (!rc && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'S': *sock_flag = optarg; break;
        case 'a': json_array_append_new(allow, json_string(optarg)); break;
        case 'A': json_array_append_new(allow_ip, json_string(optarg)); break;
        case 'n': no_egress = true; break;
        case 't':
            if (parse_uint(optarg, 31536000, &v))
                rc = verb_fail("--timeout '%.64s': want whole seconds, at most 31536000 (0: never)",
                               optarg);
            else
                json_object_set_new(body, "timeout_s", json_integer((json_int_t)v));
            break;
        case 'h': fputs(UPDATE_USAGE, stdout); rc = -1; break;
        case ':': rc = verb_fail("%s needs a value", argv[optind - 1]); break;
        default: rc = verb_fail("unknown option '%s' (see airlock update --help)", argv[optind - 1]);
        }
    }
    if (!rc && optind >= argc)
        rc = verb_fail("no sandbox id: airlock update [options] ID");
    else if (!rc && optind + 1 < argc)
        rc = verb_fail("unexpected argument '%.200s': one sandbox id at a time", argv[optind + 1]);
    if (!rc)
        *id = argv[optind];
    if (!rc && no_egress && (json_array_size(allow) || json_array_size(allow_ip)))
        rc = verb_fail("--no-egress empties the allowlist: give it without --allow or --allow-ip");
    struct egress_policy *p = rc ? NULL : malloc(sizeof(*p));
    if (!rc && (!p || check_rules(allow, false, p) || check_rules(allow_ip, true, p)))
        rc = p ? EXIT_AIRLOCK_ERROR : verb_fail("out of memory");
    free(p);
    if (!rc && (no_egress || json_array_size(allow)))
        json_object_set(body, "allow", allow);
    if (!rc && (no_egress || json_array_size(allow_ip)))
        json_object_set(body, "allow_ip", allow_ip);
    if (!rc && !json_object_size(body))
        rc = verb_fail("nothing to change: give --allow, --allow-ip, --no-egress or --timeout "
                       "(see airlock update --help)");
    json_decref(allow);
    json_decref(allow_ip);
    return rc;
}

int cmd_update(int argc, char **argv)
{
    const char *sock_flag = NULL, *id = NULL;
    json_t *body = json_object();
    int rc = parse(argc, argv, body, &sock_flag, &id);
    char sock[4096], err[512], path[256];
    if (!rc && !verb_id_ok(id))
        rc = verb_fail("'%.64s' is not a sandbox id", id);
    if (!rc && api_client_socket(sock_flag, sock, sizeof(sock), err, sizeof(err)))
        rc = verb_fail("%s", err);
    if (!rc) {
        int status;
        snprintf(path, sizeof(path), "/v1/sandboxes/%s", id);
        json_t *j = verb_call(sock, "PATCH", path, body, 200, &status);
        if (j)
            printf("%s\n", id);
        rc = j ? 0 : EXIT_AIRLOCK_ERROR;
        json_decref(j);
    }
    json_decref(body);
    return rc < 0 ? 0 : rc;
}
