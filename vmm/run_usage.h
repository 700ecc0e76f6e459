/* `airlock run --help`. */
#ifndef AIRLOCK_VMM_RUN_USAGE_H
#define AIRLOCK_VMM_RUN_USAGE_H

void run_usage(void);

#endif
