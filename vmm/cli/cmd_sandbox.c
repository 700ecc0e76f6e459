/* The docker-like verbs on sandboxes, clients of `airlock serve`'s API
 * (vmm/sandbox/api_client.h): create, exec, ls, rm.  Each finds the daemon
 * through --socket, $AIRLOCK_SOCKET or the default path, and says in one
 * line how to start one when none answers. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmm/agent_client/agent_client.h"
#include "vmm/agent_client/command_defaults.h"
#include "vmm/cli/commands.h"
#include "vmm/cli/exec_tty.h"
#include "vmm/cli/sandbox_options.h"
#include "vmm/cli/verb_api.h"
#include "vmm/sandbox/api_client.h"
#include "vmm/util/base64.h"
#include "vmm/util/exit_codes.h"
#include "vmm/util/parse.h"

#define STDIN_MAX (256u << 10) /* -i: stdin goes whole in the request body */

int cmd_create(int argc, char **argv)
{
    const char *sock_flag = NULL;
    json_t *body = NULL;
    int rc = sandbox_create_options(argc, argv, "create", CREATE_USAGE, &body, &sock_flag);
    char sock[4096], err[512];
    if (!rc && api_client_socket(sock_flag, sock, sizeof(sock), err, sizeof(err)))
        rc = verb_fail("%s", err);
    if (!rc) {
        int status;
        json_t *j = verb_call(sock, "POST", "/v1/sandboxes", body, 201, &status);
        if (j)
            printf("%s\n", json_string_value(json_object_get(j, "id")));
        rc = j ? 0 : EXIT_AIRLOCK_ERROR;
        json_decref(j);
    }
    json_decref(body);
    return rc < 0 ? 0 : rc;
}

static char *read_stdin(size_t *len)
{
    char *buf = malloc(STDIN_MAX + 1);
    size_t n = 0;
    ssize_t r;
    while (buf && n <= STDIN_MAX && (r = read(STDIN_FILENO, buf + n, STDIN_MAX + 1 - n)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        n += (size_t)r;
    }
    *len = n;
    return buf;
}

int cmd_exec(int argc, char **argv)
{
    static const struct option opts[] = {
        {"socket", required_argument, NULL, 'S'}, {"user", required_argument, NULL, 'u'},
        {"timeout", required_argument, NULL, 'T'}, {"help", no_argument, NULL, 'h'},
        {"interactive", no_argument, NULL, 'i'},  {"tty", no_argument, NULL, 't'},
        {0},
    };
    const char *sock_flag = NULL;
    json_t *body = json_object(), *env = json_object();
    bool with_stdin = false, tty = false;
    int c, rc = 0;
    uint64_t v;
    optind = 0;
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, "+:ite:w:", opts, NULL)) != -1) {
        switch (c) {
        case 'S': sock_flag = optarg; break;
        case 'i': with_stdin = true; break;
        case 't': tty = true; break;
        case 'w': json_object_set_new(body, "cwd", json_string(optarg)); break;
        case 'u': json_object_set_new(body, "user", json_string(optarg)); break;
        case 'T':
            if (parse_uint(optarg, COMMAND_MAX_TIMEOUT_S, &v))
                rc = verb_fail("--timeout '%.64s': want whole seconds (0: none)", optarg);
            else
                json_object_set_new(body, "timeout_s", json_integer((json_int_t)v));
            break;
        case 'e':
            if (sandbox_add_var(env, optarg))
                rc = verb_fail("-e '%.64s': want NAME=VALUE", optarg);
            break;
        case 'h':
            printf("usage: airlock exec [-i] [-t] [-e K=V]... [-w DIR] [--user UID[:GID]]\n"
                   "                    [--timeout S] [--socket PATH] ID [--] CMD [ARGS...]\n"
                   "Runs CMD in sandbox ID; exits with its status as airlock run does.\n"
                   "-i sends our stdin (read whole first, at most 256 KiB).\n"
                   "-t runs CMD on a terminal of our terminal's size, stdout and stderr one\n"
                   "stream, as docker exec -t: its size changes follow; with -t, -i forwards\n"
                   "our keys as they come (^C included: our terminal is raw meanwhile) and\n"
                   "wants our stdin to be a terminal.\n");
            rc = -1;
            break;
        case ':': rc = verb_fail("%s needs a value", argv[optind - 1]); break;
        default: rc = verb_fail("unknown option '%s' (see airlock exec --help)", argv[optind - 1]);
        }
    }
    const char *id = NULL;
    if (!rc) {
        if (optind >= argc)
            rc = verb_fail("no sandbox id: airlock exec [options] ID [--] CMD [ARGS...]");
        else
            id = argv[optind++];
    }
    if (!rc && optind < argc && !strcmp(argv[optind], "--"))
        optind++;
    if (!rc && optind >= argc)
        rc = verb_fail("no command: airlock exec [options] ID [--] CMD [ARGS...]");
    json_t *args = json_array();
    for (int i = optind; !rc && i < argc; i++)
        json_array_append_new(args, json_string(argv[i]));
    json_object_set_new(body, "argv", args);
    json_object_set_new(body, "env", env);
    if (!rc && with_stdin && !tty) {
        size_t len;
        char *in = read_stdin(&len);
        json_t *s = in && len <= STDIN_MAX ? json_stringn(in, len) : NULL;
        char *b64 = in && len <= STDIN_MAX && !s ? base64_encode(in, len) : NULL;
        free(in);
        if (s)
            json_object_set_new(body, "stdin", s);
        else if (b64) /* not UTF-8: as base64 */
            json_object_set_new(body, "stdin_b64", json_string(b64));
        else
            rc = verb_fail("-i: stdin over 256 KiB (it goes whole in the request)");
        free(b64);
    }
    char sock[4096], err[512], path[256];
    if (!rc && api_client_socket(sock_flag, sock, sizeof(sock), err, sizeof(err)))
        rc = verb_fail("%s", err);
    if (!rc && !verb_id_ok(id))
        rc = verb_fail("'%.64s' is not a sandbox id", id);
    if (!rc && tty) {
        rc = exec_tty_run(sock, id, body, with_stdin);
        json_decref(body);
        return rc;
    }
    struct api_client cl;
    if (!rc) {
        snprintf(path, sizeof(path), "/v1/sandboxes/%s/commands", id);
        if (api_client_request(&cl, sock, "POST", path, body, err, sizeof(err)))
            rc = verb_fail("%s", err);
    }
    json_decref(body);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (cl.status != 200) {
        json_t *j = api_client_json(&cl, err, sizeof(err));
        char buf[64];
        rc = verb_fail("%s", api_client_error_text(j, cl.status, buf, sizeof(buf)));
        json_decref(j);
        api_client_close(&cl);
        return rc;
    }
    int status = -1;
    json_t *line;
    while ((line = api_client_line(&cl, err, sizeof(err)))) {
        const char *type = json_string_value(json_object_get(line, "type"));
        if (type && !strcmp(type, "stdout"))
            api_client_line_write(line, STDOUT_FILENO);
        else if (type && !strcmp(type, "stderr"))
            api_client_line_write(line, STDERR_FILENO);
        else if (type && !strcmp(type, "exit"))
            status = verb_exit_status(line);
        json_decref(line);
    }
    api_client_close(&cl);
    if (status < 0)
        return verb_fail("%s", err[0] ? err : "the daemon's stream ended without an exit record");
    return status;
}

int cmd_ls(int argc, char **argv)
{
    static const struct option opts[] = {
        {"socket", required_argument, NULL, 'S'}, {"json", no_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
        {0},
    };
    const char *sock_flag = NULL;
    bool as_json = false, quiet = false;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:q", opts, NULL)) != -1) {
        switch (c) {
        case 'S': sock_flag = optarg; break;
        case 'j': as_json = true; break;
        case 'q': quiet = true; break;
        case 'h':
            printf("usage: airlock ls [-q|--quiet] [--json] [--socket PATH]\n"
                   "Lists the sandboxes of airlock serve (-q: ids only).\n");
            return 0;
        case ':': return verb_fail("%s needs a value", argv[optind - 1]);
        default: return verb_fail("unknown option '%s' (see airlock ls --help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return verb_fail("unexpected argument '%.200s'", argv[optind]);
    char sock[4096], err[512];
    if (api_client_socket(sock_flag, sock, sizeof(sock), err, sizeof(err)))
        return verb_fail("%s", err);
    int status;
    json_t *j = verb_call(sock, "GET", "/v1/sandboxes", NULL, 200, &status);
    if (!j)
        return EXIT_AIRLOCK_ERROR;
    json_t *list = json_object_get(j, "sandboxes"), *sb;
    size_t i;
    if (as_json) {
        char *text = json_dumps(list, JSON_INDENT(2));
        printf("%s\n", text ? text : "[]");
        free(text);
    } else {
        if (!quiet)
            printf("%-16s  %-7s  %-12s  %6s  %4s  %8s  %s\n", "ID", "STATE", "IMAGE", "MEM", "CPUS",
                   "COMMANDS", "AGE");
        int64_t now = (int64_t)time(NULL) * 1000;
        json_array_foreach(list, i, sb) {
            const char *id = json_string_value(json_object_get(sb, "id"));
            if (quiet) {
                printf("%s\n", id ? id : "?");
                continue;
            }
            const char *image = json_string_value(json_object_get(sb, "image"));
            const char *slash = image ? strrchr(image, '/') : NULL;
            int64_t age = (now - json_integer_value(json_object_get(sb, "created_ms"))) / 1000;
            const char *state = json_string_value(json_object_get(sb, "state"));
            printf("%-16s  %-7.7s  %-12.12s  %6lld  %4lld  %8lld  %llds\n", id ? id : "?",
                   state ? state : "?", slash ? slash + 1 : image ? image : "?",
                   (long long)json_integer_value(json_object_get(sb, "mem")),
                   (long long)json_integer_value(json_object_get(sb, "cpus")),
                   (long long)json_integer_value(json_object_get(sb, "commands_run")),
                   (long long)(age < 0 ? 0 : age));
        }
    }
    json_decref(j);
    return 0;
}

/* A verb that does one request per sandbox id (rm, pause, resume): each
 * id it did is printed; the status of the last that failed, else 0.
 * flag, when not NULL, is one more option (--FLAG), which sends
 * flag_body with each request. */
static int each_id(int argc, char **argv, const char *verb, const char *help, const char *method,
                   const char *suffix, int want, const char *flag, json_t *flag_body)
{
    const char *sock_flag = NULL;
    bool flag_set = false;
    int opt = verb_socket_option(argc, argv, verb, help, &sock_flag, flag, &flag_set);
    json_t *body = flag_set ? flag_body : NULL;
    if (opt)
        return opt < 0 ? 0 : opt;
    if (optind >= argc)
        return verb_fail("no sandbox id: airlock %s ID...", verb);
    char sock[4096], err[512];
    if (api_client_socket(sock_flag, sock, sizeof(sock), err, sizeof(err)))
        return verb_fail("%s", err);
    int rc = 0;
    for (int i = optind; i < argc; i++) {
        char path[256];
        if (!verb_id_ok(argv[i])) {
            rc = verb_fail("'%.64s' is not a sandbox id", argv[i]);
            continue;
        }
        snprintf(path, sizeof(path), "/v1/sandboxes/%s%s", argv[i], suffix);
        int status;
        json_t *j = verb_call(sock, method, path, body, want, &status);
        if (!j) {
            rc = EXIT_AIRLOCK_ERROR;
            continue;
        }
        printf("%s\n", argv[i]);
        json_decref(j);
    }
    return rc;
}

int cmd_rm(int argc, char **argv)
{
    return each_id(argc, argv, "rm", "usage: airlock rm [--socket PATH] ID...\n"
                   "Destroys each sandbox (paused ones too) and prints its id.\n",
                   "DELETE", "", 204, NULL, NULL);
}

int cmd_pause(int argc, char **argv)
{
    json_t *no_memory = json_pack("{s:b}", "memory", 0);
    int rc = each_id(argc, argv, "pause", "usage: airlock pause [--no-memory] [--socket PATH] ID...\n"
                     "Saves each sandbox to the daemon's state folder and ends its VM; it keeps\n"
                     "its id, its files and its background commands, and prints its id.\n"
                     "--no-memory keeps its files only (synced first): it resumes by booting\n"
                     "afresh, without its processes (E2B's filesystem-only pause).\n",
                     "POST", "/pause", 200, "no-memory", no_memory);
    json_decref(no_memory);
    return rc;
}

int cmd_resume(int argc, char **argv)
{
    return each_id(argc, argv, "resume", "usage: airlock resume [--socket PATH] ID...\n"
                   "Restores each paused sandbox where it was paused and prints its id (any\n"
                   "command or file request resumes one too).\n",
                   "POST", "/resume", 200, NULL, NULL);
}
