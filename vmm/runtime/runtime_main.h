/* airlock-runtime: an OCI runtime with runc's command line, whose
 * containers are airlock microVMs (docs/kubernetes.md).  The same binary
 * as airlock, run under the name airlock-runtime. */
#ifndef AIRLOCK_RUNTIME_RUNTIME_MAIN_H
#define AIRLOCK_RUNTIME_RUNTIME_MAIN_H

#define RUNTIME_NAME "airlock-runtime"

int runtime_main(int argc, char **argv);

#endif
