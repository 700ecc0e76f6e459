#include "vmm/sandbox/prom_text.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void prom_buf_free(struct prom_buf *b)
{
    free(b->p);
    *b = (struct prom_buf){0};
}

static bool reserve(struct prom_buf *b, size_t more)
{
    if (b->failed)
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

static void put(struct prom_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(struct prom_buf *b, const char *s)
{
    put(b, s, strlen(s));
}

/* s with backslash and newline escaped, and the double quote too in a
 * label value (quote = true): the format's two escapings. */
static void put_escaped(struct prom_buf *b, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            puts_(b, "\\\\");
        else if (*s == '\n')
            puts_(b, "\\n");
        else if (*s == '"' && quote)
            puts_(b, "\\\"");
        else
            put(b, s, 1);
    }
}

/* A sample value as the format takes it: Go's ParseFloat forms. */
static void put_value(struct prom_buf *b, double v)
{
    char num[40];
    if (isnan(v))
        snprintf(num, sizeof(num), "NaN");
    else if (isinf(v))
        snprintf(num, sizeof(num), "%s", v > 0 ? "+Inf" : "-Inf");
    else if (v > -1e15 && v < 1e15 && v == (double)(long long)v) /* no libm */
        snprintf(num, sizeof(num), "%.0f", v);
    else
        snprintf(num, sizeof(num), "%.15g", v);
    puts_(b, num);
}

void prom_family(struct prom_buf *b, const char *name, const char *type, const char *help)
{
    puts_(b, "# HELP ");
    puts_(b, name);
    puts_(b, " ");
    put_escaped(b, help, false);
    puts_(b, "\n# TYPE ");
    puts_(b, name);
    puts_(b, " ");
    puts_(b, type);
    puts_(b, "\n");
}

void prom_sample(struct prom_buf *b, const char *name, const char *const *labels, double value)
{
    puts_(b, name);
    for (size_t i = 0; labels && labels[i]; i += 2) {
        puts_(b, i ? "," : "{");
        puts_(b, labels[i]);
        puts_(b, "=\"");
        put_escaped(b, labels[i + 1] ? labels[i + 1] : "", true);
        puts_(b, "\"");
    }
    if (labels && labels[0])
        puts_(b, "}");
    puts_(b, " ");
    put_value(b, value);
    puts_(b, "\n");
}

void prom_histogram_observe(struct prom_histogram *h, double v)
{
    unsigned i = 0;
    while (i < h->n && v > h->bounds[i]) /* le: a value on a bound is in its bucket */
        i++;
    h->counts[i]++;
    h->sum += v;
    h->count++;
}

void prom_histogram_write(struct prom_buf *b, const char *name, const char *help,
                          const struct prom_histogram *h)
{
    char metric[160], le[40];
    prom_family(b, name, "histogram", help);
    snprintf(metric, sizeof(metric), "%s_bucket", name);
    uint64_t cum = 0;
    for (unsigned i = 0; i < h->n; i++) {
        cum += h->counts[i];
        snprintf(le, sizeof(le), "%.15g", h->bounds[i]);
        prom_sample(b, metric, (const char *const[]){"le", le, NULL}, (double)cum);
    }
    prom_sample(b, metric, (const char *const[]){"le", "+Inf", NULL}, (double)h->count);
    snprintf(metric, sizeof(metric), "%s_sum", name);
    prom_sample(b, metric, NULL, h->sum);
    snprintf(metric, sizeof(metric), "%s_count", name);
    prom_sample(b, metric, NULL, (double)h->count);
}
