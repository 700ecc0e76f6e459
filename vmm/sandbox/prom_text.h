/* Prometheus's text exposition format (version 0.0.4), written: metric
 * families with their HELP and TYPE lines, samples with labels, and
 * histograms (cumulative buckets up to +Inf, _sum, _count).  Label values
 * are escaped as the format says (backslash, double quote, newline); HELP
 * text likewise (backslash, newline).  Nothing here knows the daemon:
 * vmm/sandbox/metrics.c says what is measured. */
#ifndef AIRLOCK_SANDBOX_PROM_TEXT_H
#define AIRLOCK_SANDBOX_PROM_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The text so far, grown as needed; `failed` once an allocation failed
 * (the text is then not to be served). */
struct prom_buf {
    char *p;
    size_t len, cap;
    bool failed;
};

void prom_buf_free(struct prom_buf *b);

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
void prom_family(struct prom_buf *b, const char *name, const char *type, const char *help);

/* "name{k1="v1",...} value": labels is NULL or NULL-terminated pairs
 * (name, value, name, value, ..., NULL).  Whole numbers are written
 * without a fraction, +Inf, -Inf and NaN as the format spells them. */
void prom_sample(struct prom_buf *b, const char *name, const char *const *labels, double value);

/* A histogram's buckets: upper bounds in increasing order (+Inf is
 * implied), a count per bucket (not cumulative: observe adds to one). */
struct prom_histogram {
    const double *bounds;
    unsigned n;
    uint64_t *counts;   /* n + 1: the last is above every bound */
    double sum;
    uint64_t count;
};

void prom_histogram_observe(struct prom_histogram *h, double v);

/* name_bucket{le="..."} (cumulative, ending with le="+Inf" = count),
 * name_sum and name_count; the family's HELP and TYPE first. */
void prom_histogram_write(struct prom_buf *b, const char *name, const char *help,
                          const struct prom_histogram *h);

#endif
