/* E2B's control plane (its spec/openapi.yml), JSON with the API key:
 *   POST   /sandboxes                 201 {templateID, sandboxID, clientID,
 *                                     envdVersion, envdAccessToken, ...}
 *   GET    /sandboxes, /v2/sandboxes  the running ones (metadata filter;
 *                                     v2: state filter, limit, nextToken)
 *   GET    /sandboxes/{id}            its detail
 *   DELETE /sandboxes/{id}            204
 *   POST   /sandboxes/{id}/timeout    {timeout}: 204, the lease from now
 *   POST   /sandboxes/{id}/refreshes  {duration}: 204, likewise
 *   POST   /sandboxes/{id}/connect    {timeout}: 200, as a create answers
 * Errors are {"code": HTTP status, "message"}.  Each maps onto /v1's
 * operation (vmm/sandbox/): E2B's fields become /v1's create fields. */
#ifndef AIRLOCK_E2B_E2B_CONTROL_H
#define AIRLOCK_E2B_E2B_CONTROL_H

#include <stdbool.h>

#include "vmm/sandbox/api_routes.h"

/* Whether the path (no query) is one of the control plane's. */
bool e2b_control_path(const char *path);
/* Serves one (the caller checked the API key). */
void e2b_control(struct api_server *srv, struct api_conn *c, const char *path);

/* An error in the control plane's shape (also the envd plane's REST
 * paths): {"code": status, "message"}. */
void e2b_rest_error(struct api_conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The error hook that answers api_error this way (vmm/sandbox/api_http.h). */
void e2b_rest_error_hook(struct api_conn *c, int status, const char *field, const char *msg);

#endif
