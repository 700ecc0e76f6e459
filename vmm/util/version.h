/* airlock's version, as --version, `airlock surface` and the API say it
 * (a release build sets it with -DAIRLOCK_VERSION=...). */
#ifndef AIRLOCK_UTIL_VERSION_H
#define AIRLOCK_UTIL_VERSION_H

#ifndef AIRLOCK_VERSION
#define AIRLOCK_VERSION "dev"
#endif

#endif
