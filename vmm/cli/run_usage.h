/* `airlock run --help`. */
#ifndef AIRLOCK_CLI_RUN_USAGE_H
#define AIRLOCK_CLI_RUN_USAGE_H

void run_usage(void);

#endif
