/* Files written into a running container's root folder on the host,
 * copied into its VM.  `docker cp` into a container (and `podman cp`,
 * `kubectl cp` through a runc-like runtime's root) does not ask the
 * runtime: dockerd mounts the container's overlay and untars into it in
 * a mount namespace of its own (its docker-untar, chrooted there).  Under
 * runc that overlay is the container's root, so the container sees the
 * file; here the guest runs from a disk made of the overlay at `create`,
 * and would not.  So the init stand-in watches the overlay:
 *   - only when the root folder is an overlay (an engine's mount of this
 *     container's layers: every write to it is the container's); a plain
 *     folder's file system is the host's, not watched;
 *   - fanotify's FAN_CLOSE_WRITE on the overlay's whole file system (a
 *     mount mark would miss docker-untar's bind mount of it), so each
 *     file written and closed, through any mount of it, comes with an fd;
 *   - that file goes to the same path in the guest through the agent
 *     (container_vm_put), with its mode, owner and missing folders;
 *   - what fanotify does not report is not copied: new empty folders,
 *     symlinks, removals, renames, a chmod alone.
 * The guest's own writes never reach the overlay (docs/kubernetes.md). */
#ifndef AIRLOCK_RUNTIME_CONTAINER_ROOT_WATCH_H
#define AIRLOCK_RUNTIME_CONTAINER_ROOT_WATCH_H

struct container_root_watch;

/* Starts copying what is written to `root` (the container's root folder)
 * into the guest whose agent is at `sock`.  *out is NULL when root is
 * no overlay.  Its thread blocks every signal.  0, or -errno. */
int container_root_watch_start(const char *sock, const char *root,
                               struct container_root_watch **out);
/* Stops it; NULL is fine. */
void container_root_watch_stop(struct container_root_watch *w);

#endif
