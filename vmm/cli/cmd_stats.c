/* `airlock stats [--no-stream] [--format json] [ID...]`: what each
 * sandbox costs the host, as `docker stats` shows containers: a table of
 * the figures its record carries (vmm/sandbox/sandbox_stats.h: CPU, RSS,
 * PSS, disk overlay, egress bytes, commands), read from the daemon every
 * second until interrupted, or once with --no-stream. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli/commands.h"
#include "vmm/cli/sandbox_options.h"
#include "vmm/cli/verb_api.h"
#include "vmm/sandbox/api_client.h"
#include "vmm/util/exit_codes.h"

#define STATS_USAGE                                                                          \
    "usage: airlock stats [--no-stream] [--format json] [--socket PATH] [ID...]\n"           \
    "Shows what each sandbox (or each ID given) costs the host, as docker stats does:\n"     \
    "CPU % (of one CPU, over the daemon's last two samples), its VM processes' RSS and\n"    \
    "PSS, the bytes its disk overlay holds, its egress bytes out and in, the commands\n"     \
    "it ran.  The daemon samples each sandbox at most every 5 s.  Refreshed every\n"         \
    "second until ^C; --no-stream prints once.  --format json prints each round as\n"       \
    "one line: a JSON array of the sandboxes' figures.\n"

/* docker's units: 1.5KiB, 12.3MiB, 2.01GiB. */
static void size_text(char *out, size_t cap, json_int_t v)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double d = (double)(v < 0 ? 0 : v);
    unsigned u = 0;
    while (d >= 1024 && u < 4) {
        d /= 1024;
        u++;
    }
    snprintf(out, cap, u ? "%.4g%s" : "%.0f%s", d, unit[u]);
}

static json_int_t num(json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

/* The figures of one sandbox's record, as --format json prints them. */
static json_t *figures(json_t *sb)
{
    static const char *const keys[] = {"id", "image", "state", "cpu_pct", "cpu_ms", "rss_bytes",
                                       "pss_bytes", "overlay_bytes", "egress_bytes",
                                       "commands_run", "stats_ms", NULL};
    json_t *o = json_object();
    for (const char *const *k = keys; *k; k++) {
        json_t *v = json_object_get(sb, *k);
        if (v)
            json_object_set(o, *k, v);
    }
    if (!json_object_get(o, "state")) /* a daemon whose records have none: all run */
        json_object_set_new(o, "state", json_string("running"));
    return o;
}

static void table(json_t *rows)
{
    printf("%-16s  %-12s  %-8s  %6s  %-16s  %-10s  %-14s  %-21s  %s\n", "ID", "IMAGE", "STATE",
           "CPU %", "MEM USAGE (RSS)", "PSS", "DISK (overlay)", "EGRESS OUT / IN", "COMMANDS");
    json_t *r;
    size_t i;
    json_array_foreach(rows, i, r) {
        char cpu[16] = "--", rss[16], pss[16], disk[16], out[16], in[16], egress[40];
        json_t *pct = json_object_get(r, "cpu_pct");
        if (json_is_number(pct))
            snprintf(cpu, sizeof(cpu), "%.1f%%", json_number_value(pct));
        size_text(rss, sizeof(rss), num(r, "rss_bytes"));
        size_text(pss, sizeof(pss), num(r, "pss_bytes"));
        size_text(disk, sizeof(disk), num(r, "overlay_bytes"));
        json_t *eg = json_object_get(r, "egress_bytes");
        size_text(out, sizeof(out), num(eg, "out"));
        size_text(in, sizeof(in), num(eg, "in"));
        snprintf(egress, sizeof(egress), "%s / %s", out, in);
        const char *image = json_string_value(json_object_get(r, "image"));
        const char *slash = image ? strrchr(image, '/') : NULL;
        const char *id = json_string_value(json_object_get(r, "id"));
        const char *state = json_string_value(json_object_get(r, "state"));
        printf("%-16s  %-12.12s  %-8s  %6s  %-16s  %-10s  %-14s  %-21s  %lld\n", id ? id : "?",
               slash ? slash + 1 : image ? image : "?", state ? state : "?", cpu, rss, pss, disk,
               egress, (long long)num(r, "commands_run"));
    }
}

/* One round: the sandboxes asked for (all when ids is empty), their
 * figures; NULL after a one-line error (no daemon, an unknown id). */
static json_t *round_rows(const char *sock, char **ids, int nids, bool first)
{
    int status;
    json_t *j = verb_call(sock, "GET", "/v1/sandboxes", NULL, 200, &status);
    if (!j)
        return NULL;
    json_t *list = json_object_get(j, "sandboxes"), *sb, *rows = json_array();
    size_t i;
    for (int k = 0; k < nids && first; k++) {
        bool found = false;
        json_array_foreach(list, i, sb)
            found = found || !strcmp(json_string_value(json_object_get(sb, "id")) ?: "", ids[k]);
        if (!found) { /* later rounds show who is left, as docker stats does */
            verb_fail("no sandbox '%.64s'", ids[k]);
            json_decref(rows);
            json_decref(j);
            return NULL;
        }
    }
    json_array_foreach(list, i, sb) {
        const char *id = json_string_value(json_object_get(sb, "id"));
        bool wanted = !nids;
        for (int k = 0; k < nids && !wanted && id; k++)
            wanted = !strcmp(id, ids[k]);
        if (wanted)
            json_array_append_new(rows, figures(sb));
    }
    json_decref(j);
    return rows;
}

int cmd_stats(int argc, char **argv)
{
    static const struct option opts[] = {
        {"socket", required_argument, NULL, 'S'}, {"no-stream", no_argument, NULL, 'n'},
        {"format", required_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
        {0},
    };
    const char *sock_flag = NULL;
    bool stream = true, as_json = false;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
        switch (c) {
        case 'S': sock_flag = optarg; break;
        case 'n': stream = false; break;
        case 'f':
            if (!strcmp(optarg, "json"))
                as_json = true;
            else if (strcmp(optarg, "table"))
                return verb_fail("--format '%.64s': want json or table", optarg);
            break;
        case 'h': printf("%s", STATS_USAGE); return 0;
        case ':': return verb_fail("%s needs a value", argv[optind - 1]);
        default: return verb_fail("unknown option '%s' (see airlock stats --help)", argv[optind - 1]);
        }
    }
    for (int i = optind; i < argc; i++)
        if (!verb_id_ok(argv[i]))
            return verb_fail("'%.64s' is not a sandbox id", argv[i]);
    char sock[4096], err[512];
    if (api_client_socket(sock_flag, sock, sizeof(sock), err, sizeof(err)))
        return verb_fail("%s", err);
    bool tty = isatty(STDOUT_FILENO);
    for (bool first = true;; first = false) {
        json_t *rows = round_rows(sock, argv + optind, argc - optind, first);
        if (!rows)
            return EXIT_AIRLOCK_ERROR;
        if (stream && tty && !as_json)
            printf("\033[H\033[J"); /* the table in place, as docker stats redraws it */
        else if (!first && !as_json)
            printf("\n");
        if (as_json) {
            char *text = json_dumps(rows, JSON_COMPACT);
            printf("%s\n", text ? text : "[]");
            free(text);
        } else {
            table(rows);
        }
        json_decref(rows);
        fflush(stdout);
        if (!stream)
            return 0;
        sleep(1);
    }
}
