/* airlock's exit statuses, the docker-run / timeout(1) convention. */
#ifndef AIRLOCK_UTIL_EXIT_CODES_H
#define AIRLOCK_UTIL_EXIT_CODES_H

#define EXIT_AIRLOCK_ERROR   125 /* airlock's own error, bad input, guest crash */
#define EXIT_CANNOT_EXECUTE  126
#define EXIT_NOT_FOUND       127
#define EXIT_TIMEOUT         124

#endif
