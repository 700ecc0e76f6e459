/* devices/serial.c: the 16550A as the guest's driver sees it. */
#include <stdlib.h>
#include <string.h>

#include "devices/serial.h"
#include "tests/unit/helpers.h"

enum { RBR = 0, THR = 0, DLL = 0, IER = 1, DLM = 1, IIR = 2, FCR = 2, LCR = 3, MCR = 4,
       LSR = 5, MSR = 6, SCR = 7 };

struct fake {
    uint8_t tx[4096];
    unsigned ntx;
    int level;        /* last level set_irq reported */
    unsigned irq_calls;
    unsigned ready;   /* rx_ready calls */
};

static void f_tx(void *o, uint8_t b)
{
    struct fake *f = o;
    if (f->ntx < sizeof(f->tx))
        f->tx[f->ntx] = b;
    f->ntx++;
}
static void f_irq(void *o, int level) { struct fake *f = o; f->level = level; f->irq_calls++; }
static void f_ready(void *o) { ((struct fake *)o)->ready++; }

static const struct serial_ops ops = {.tx = f_tx, .set_irq = f_irq, .rx_ready = f_ready};

static struct serial s;
static struct fake f;

static void setup(void)
{
    memset(&f, 0, sizeof(f));
    serial_init(&s, &ops, &f);
}

static void teardown(void)
{
    pthread_mutex_destroy(&s.lock);
}

static uint8_t in(unsigned reg)
{
    uint8_t v = 0xee;
    serial_io(&s, reg, &v, 1, false);
    return v;
}

static void out(unsigned reg, uint8_t v)
{
    serial_io(&s, reg, &v, 1, true);
}

START_TEST(reset_state)
{
    ck_assert_uint_eq(in(IER), 0);
    ck_assert_uint_eq(in(IIR), 0x01); /* no interrupt, FIFO off */
    ck_assert_uint_eq(in(LSR), 0x60); /* THRE | TEMT, no data */
    ck_assert_uint_eq(in(MSR), 0xb0); /* DCD | DSR | CTS */
    ck_assert_uint_eq(f.level, 0);
}
END_TEST

START_TEST(transmit)
{
    out(THR, 'h');
    out(THR, 'i');
    ck_assert_uint_eq(f.ntx, 2);
    ck_assert_mem_eq(f.tx, "hi", 2);
    ck_assert_uint_eq(f.level, 0); /* THRI not enabled: no interrupt */
    ck_assert_uint_eq(in(LSR) & 0x60, 0x60);
}
END_TEST

START_TEST(dlab)
{
    out(LCR, 0x83); /* DLAB, 8N1 */
    out(DLL, 0x01);
    out(DLM, 0x02);
    ck_assert_uint_eq(in(DLL), 0x01);
    ck_assert_uint_eq(in(DLM), 0x02);
    ck_assert_uint_eq(f.ntx, 0);       /* divisor writes are not data */
    ck_assert_uint_eq(in(IER), 0x02);  /* DLM, not IER */
    out(LCR, 0x03);
    ck_assert_uint_eq(in(LCR), 0x03);
    ck_assert_uint_eq(in(IER), 0);     /* IER untouched by the DLM write */
    out(THR, 'x');
    ck_assert_uint_eq(f.ntx, 1);
    out(LCR, 0x80);
    ck_assert_uint_eq(in(DLL), 0x01);  /* the divisor survived */
}
END_TEST

START_TEST(ier_masked)
{
    out(IER, 0xff);
    ck_assert_uint_eq(in(IER), 0x0f);
    out(IER, 0xf0);
    ck_assert_uint_eq(in(IER), 0);
}
END_TEST

START_TEST(thri)
{
    out(IER, 0x02); /* THR is empty: the interrupt is due at once */
    ck_assert_uint_eq(f.level, 1);
    ck_assert_uint_eq(in(IIR) & 0x0f, 0x02);
    ck_assert_uint_eq(f.level, 0); /* reading IIR cleared it */
    ck_assert_uint_eq(in(IIR) & 0x0f, 0x01);
    out(THR, 'a'); /* sent at once: empty again */
    ck_assert_uint_eq(f.level, 1);
    ck_assert_uint_eq(in(IIR) & 0x0f, 0x02);
    ck_assert_uint_eq(f.level, 0);
    out(THR, 'b');
    ck_assert_uint_eq(f.level, 1);
    out(IER, 0); /* masking lowers the line */
    ck_assert_uint_eq(f.level, 0);
    ck_assert_uint_eq(in(IIR) & 0x0f, 0x01);
}
END_TEST

START_TEST(receive)
{
    uint8_t buf[100];
    for (unsigned i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)i;
    /* a guest that is not listening (IER.RDI clear) takes nothing */
    ck_assert_uint_eq(serial_receive(&s, buf, 10), 0);
    ck_assert_uint_eq(in(LSR) & 0x01, 0);
    out(IER, 0x01); /* starts listening: the host may offer input now */
    ck_assert_uint_eq(f.ready, 1);
    ck_assert_uint_eq(f.level, 0);
    ck_assert_uint_eq(serial_receive(&s, buf, 10), 10);
    ck_assert_uint_eq(in(LSR) & 0x01, 1); /* DR */
    ck_assert_uint_eq(f.level, 1);
    ck_assert_uint_eq(in(IIR) & 0x0f, 0x04);
    ck_assert_uint_eq(f.level, 1);        /* reading IIR does not clear RDI */
    ck_assert_uint_eq(serial_receive(&s, buf + 10, 90), SERIAL_RX_FIFO - 10);
    ck_assert_uint_eq(serial_receive(&s, buf, 1), 0); /* full */
    for (unsigned i = 0; i < SERIAL_RX_FIFO; i++) {
        ck_assert_uint_eq(f.ready, 1);
        ck_assert_uint_eq(in(RBR), i); /* in order */
    }
    ck_assert_uint_eq(f.ready, 2);      /* emptied: ready for more */
    ck_assert_uint_eq(in(LSR) & 0x01, 0);
    ck_assert_uint_eq(f.level, 0);
    ck_assert_uint_eq(in(RBR), 0);      /* empty FIFO reads 0 ... */
    ck_assert_uint_eq(f.ready, 2);      /* ... and does not signal again */
    ck_assert_uint_eq(serial_receive(&s, buf, 0), 0);
    ck_assert_uint_eq(f.level, 0);
    /* re-enabling RDI while listening already is not a new start */
    out(IER, 0x01);
    ck_assert_uint_eq(f.ready, 2);
}
END_TEST

START_TEST(receive_masked_then_drained)
{
    uint8_t buf[4] = "abcd";
    out(IER, 0x01);
    ck_assert_uint_eq(serial_receive(&s, buf, 4), 4);
    out(IER, 0x00); /* the guest stops listening with bytes still queued */
    ck_assert_uint_eq(f.level, 0);
    ck_assert_uint_eq(in(LSR) & 0x01, 1); /* they can still be polled */
    ck_assert_uint_eq(serial_receive(&s, buf, 4), 0);
    for (unsigned i = 0; i < 4; i++)
        ck_assert_uint_eq(in(RBR), buf[i]);
    unsigned ready = f.ready;
    out(IER, 0x01); /* listening again, FIFO empty: host is told */
    ck_assert_uint_eq(f.ready, ready + 1);
    ck_assert_uint_eq(serial_receive(&s, buf, 4), 4);
}
END_TEST

START_TEST(rdi_before_thri)
{
    uint8_t c = 'z';
    out(IER, 0x03);
    ck_assert_uint_eq(serial_receive(&s, &c, 1), 1);
    ck_assert_uint_eq(in(IIR) & 0x0f, 0x04); /* RDI has priority */
    ck_assert_uint_eq(in(RBR), 'z');
    ck_assert_uint_eq(f.level, 1);           /* THRI still pending */
    ck_assert_uint_eq(in(IIR) & 0x0f, 0x02);
    ck_assert_uint_eq(f.level, 0);
}
END_TEST

START_TEST(fifo_control)
{
    uint8_t buf[8] = "abcdefgh";
    out(FCR, 0x01);
    ck_assert_uint_eq(in(IIR), 0xc1); /* FIFOs enabled, no interrupt */
    out(IER, 0x01);
    ck_assert_uint_eq(serial_receive(&s, buf, 8), 8);
    ck_assert_uint_eq(f.level, 1);
    ck_assert_uint_eq(in(IIR), 0xc4);
    out(FCR, 0x03); /* clear RX */
    ck_assert_uint_eq(in(LSR) & 0x01, 0);
    ck_assert_uint_eq(f.level, 0);
    ck_assert_uint_eq(in(IIR), 0xc1);
    /* the FIFO works again after a clear */
    ck_assert_uint_eq(serial_receive(&s, buf + 2, 2), 2);
    ck_assert_uint_eq(in(RBR), 'c');
    ck_assert_uint_eq(in(RBR), 'd');
    out(FCR, 0);
    ck_assert_uint_eq(in(IIR), 0x01);
}
END_TEST

START_TEST(loopback)
{
    out(MCR, 0x10 | 0x01);      /* LOOP | DTR */
    ck_assert_uint_eq(in(MSR), 0x20); /* DSR only */
    out(MCR, 0x10 | 0x02 | 0x04 | 0x08);
    ck_assert_uint_eq(in(MSR), 0x10 | 0x40 | 0x80); /* CTS, RI, DCD */
    out(THR, 'L');
    out(THR, 'B');
    ck_assert_uint_eq(f.ntx, 0); /* nothing left the UART */
    ck_assert_uint_eq(in(LSR) & 0x01, 1);
    ck_assert_uint_eq(in(RBR), 'L');
    ck_assert_uint_eq(in(RBR), 'B');
    ck_assert_uint_eq(f.ready, 1);
    for (unsigned i = 0; i < 100; i++) /* overflow drops, no crash */
        out(THR, (uint8_t)i);
    ck_assert_uint_eq(s.rx_count, SERIAL_RX_FIFO);
    ck_assert_uint_eq(in(RBR), 0);
    out(MCR, 0xff);
    ck_assert_uint_eq(in(MCR), 0x1f); /* MCR keeps 5 bits */
    out(MCR, 0x08);
    ck_assert_uint_eq(in(MSR), 0xb0); /* loop off: lines asserted again */
    out(THR, '!');
    ck_assert_uint_eq(f.ntx, 1);
}
END_TEST

START_TEST(scratch_and_readonly)
{
    out(SCR, 0xa5);
    ck_assert_uint_eq(in(SCR), 0xa5);
    out(LSR, 0x00); /* read-only: ignored */
    out(MSR, 0x00);
    ck_assert_uint_eq(in(LSR), 0x60);
    ck_assert_uint_eq(in(MSR), 0xb0);
}
END_TEST

START_TEST(wide_and_aliased)
{
    uint8_t d[8];
    /* a 4-byte write touches the first register only */
    memcpy(d, "\x41\x42\x43\x44", 4);
    serial_io(&s, THR, d, 4, true);
    ck_assert_uint_eq(f.ntx, 1);
    ck_assert_uint_eq(f.tx[0], 'A');
    out(SCR, 0x77);
    memset(d, 0xcc, sizeof(d));
    serial_io(&s, SCR, d, 4, false);
    ck_assert_uint_eq(d[0], 0x77);
    ck_assert_uint_eq(d[1], 0); /* zeros above */
    ck_assert_uint_eq(d[3], 0);
    ck_assert_uint_eq(d[4], 0xcc); /* and nothing past len */
    memset(d, 0xcc, sizeof(d));
    serial_io(&s, LSR, d, 8, false);
    ck_assert_uint_eq(d[0], 0x60);
    ck_assert_uint_eq(rd64le(d) >> 8, 0);
    /* offsets wrap modulo the 8 ports */
    uint8_t v = 0x99;
    serial_io(&s, 8 + SCR, &v, 1, true);
    ck_assert_uint_eq(in(SCR), 0x99);
    v = 0;
    serial_io(&s, UINT64_MAX, &v, 1, false); /* 7 again */
    ck_assert_uint_eq(v, 0x99);
}
END_TEST

/* The line must always agree with what IIR would report. */
static void check_irq_consistent(void)
{
    int want = 0;
    if ((s.ier & 0x01) && s.rx_count)
        want = 1;
    else if ((s.ier & 0x02) && s.thri_pending)
        want = 1;
    ck_assert_int_eq(s.irq_level, want);
    ck_assert_int_eq(f.level, want);
    ck_assert_uint_le(s.rx_count, SERIAL_RX_FIFO);
    ck_assert_uint_lt(s.rx_head, SERIAL_RX_FIFO);
}

START_TEST(hostile_sequences)
{
    unsigned seed = 12345;
    uint8_t buf[80];
    memset(buf, 'r', sizeof(buf));
    for (unsigned i = 0; i < 200000; i++) {
        unsigned r = (unsigned)rand_r(&seed);
        unsigned reg = r & 7, len = 1 + ((r >> 3) & 7);
        uint8_t d[8] = {(uint8_t)(r >> 8), (uint8_t)(r >> 16), 0, 0, 0, 0, 0, 0};
        switch ((r >> 24) % 8) {
        case 0: case 1: case 2:
            serial_io(&s, reg, d, len, true);
            break;
        case 3: case 4: case 5:
            serial_io(&s, reg, d, len, false);
            if (len > 1)
                ck_assert_uint_eq(rd64le(d) >> 8 & ((1ULL << (8 * (len - 1))) - 1), 0);
            break;
        case 6:
            serial_receive(&s, buf, (r >> 8) % sizeof(buf));
            break;
        default:
            serial_io(&s, reg | (uint64_t)r << 8, d, len, (r >> 20) & 1); /* odd offsets */
            break;
        }
        check_irq_consistent();
    }
    ck_assert_uint_gt(f.ntx, 0);
    ck_assert_uint_gt(f.irq_calls, 0);
}
END_TEST

Suite *serial_suite(void)
{
    Suite *st = suite_create("serial");
    TCase *tc = tcase_create("serial");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, reset_state);
    tcase_add_test(tc, transmit);
    tcase_add_test(tc, dlab);
    tcase_add_test(tc, ier_masked);
    tcase_add_test(tc, thri);
    tcase_add_test(tc, receive);
    tcase_add_test(tc, receive_masked_then_drained);
    tcase_add_test(tc, rdi_before_thri);
    tcase_add_test(tc, fifo_control);
    tcase_add_test(tc, loopback);
    tcase_add_test(tc, scratch_and_readonly);
    tcase_add_test(tc, wide_and_aliased);
    tcase_add_test(tc, hostile_sequences);
    suite_add_tcase(st, tc);
    return st;
}
