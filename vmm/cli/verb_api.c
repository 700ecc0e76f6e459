#include "vmm/cli/verb_api.h"

#include <stdio.h>

#include "vmm/sandbox/api_client.h"
#include "vmm/util/exit_codes.h"

json_t *verb_call(const char *sock, const char *method, const char *path, json_t *body,
                  int want, int *status)
{
    struct api_client c;
    char err[512];
    *status = 0;
    if (api_client_request(&c, sock, method, path, body, err, sizeof(err))) {
        fprintf(stderr, "airlock: %s\n", err);
        return NULL;
    }
    *status = c.status;
    json_t *j = api_client_json(&c, err, sizeof(err));
    api_client_close(&c);
    if (c.status != want) {
        char buf[64];
        fprintf(stderr, "airlock: %s\n", api_client_error_text(j, c.status, buf, sizeof(buf)));
        json_decref(j);
        return NULL;
    }
    return j ? j : json_object();
}

int verb_refusal_status(int status)
{
    return status >= 400 && status < 500 ? EXIT_AIRLOCK_ERROR : 1;
}

int verb_exit_status(json_t *exit)
{
    int status = (int)json_integer_value(json_object_get(exit, "exit_code"));
    const char *e = json_string_value(json_object_get(exit, "error"));
    if (json_is_true(json_object_get(exit, "timed_out")))
        fprintf(stderr, "airlock: CMD ran past its timeout: its process group was killed "
                        "(exit 124)\n");
    else if (e && status == EXIT_AIRLOCK_ERROR)
        fprintf(stderr, "airlock: %s\n", e);
    return status;
}
