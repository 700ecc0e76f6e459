/* Folders as tar both ways, with Docker's convention (its Engine API's
 * /containers/{id}/archive, what `docker cp` uses):
 *   GET /v1/sandboxes/{id}/archive?path=/ABS
 *       -> 200 application/x-tar (chunked): the file, folder or symlink
 *          at ABS, its top member named by ABS's last component ("."
 *          for "/"); folders whole, symlinks as links, modes and mtimes
 *          kept, owners not (root); devices, fifos and sockets left out
 *   PUT /v1/sandboxes/{id}/archive?path=/DIR   body: a tar (or tar.gz)
 *       -> 200 {"path", "entries", "bytes"}: extracted into DIR (made,
 *          with its parents, when missing), as root, modes kept
 * Limits: a download holds at most ARCHIVE_GET_MAX_ENTRIES members and
 * ARCHIVE_GET_MAX_BYTES of file data (413 before anything is sent); an
 * upload's body is at most ARCHIVE_PUT_MAX bytes (413) and its members as
 * vmm/sandbox/tar_in.h says (a refusal: 400 or 413 naming the member).  A
 * download that fails once its answer has begun (a file changed or went
 * away meanwhile) ends without its last chunk: the client sees a broken
 * body, never a short tar passed off as whole. */
#ifndef AIRLOCK_SANDBOX_ARCHIVE_H
#define AIRLOCK_SANDBOX_ARCHIVE_H

#include "vmm/sandbox/api_http.h"
#include "vmm/sandbox/registry.h"

#define ARCHIVE_PUT_MAX        (16ull << 30)
#define ARCHIVE_GET_MAX_ENTRIES 100000
#define ARCHIVE_GET_MAX_BYTES  (16ull << 30)
#define ARCHIVE_GET_MAX_NAMES  (64u << 20) /* the members' names together, held while walking */

void archive_get(struct api_conn *c, const struct sandbox *sb);
void archive_put(struct api_conn *c, const struct sandbox *sb);

#endif
