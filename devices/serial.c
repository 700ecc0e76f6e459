#include "devices/serial.h"

#include <errno.h>
#include <string.h>


/* Register offsets and bits, as in Linux's include/uapi/linux/serial_reg.h. */
enum { REG_RBR_THR_DLL = 0, REG_IER_DLM = 1, REG_IIR_FCR = 2, REG_LCR = 3,
       REG_MCR = 4, REG_LSR = 5, REG_MSR = 6, REG_SCR = 7 };
#define IER_RDI      0x01
#define IER_THRI     0x02
#define IER_MASK     0x0f
#define IIR_NO_INT   0x01
#define IIR_THRI     0x02
#define IIR_RDI      0x04
#define IIR_FIFO     0xc0
#define FCR_ENABLE   0x01
#define FCR_CLEAR_RX 0x02
#define LCR_DLAB     0x80
#define MCR_DTR      0x01
#define MCR_RTS      0x02
#define MCR_OUT1     0x04
#define MCR_OUT2     0x08
#define MCR_LOOP     0x10
#define MCR_MASK     0x1f
#define LSR_DR       0x01
#define LSR_THRE     0x20
#define LSR_TEMT     0x40
#define MSR_CTS      0x10
#define MSR_DSR      0x20
#define MSR_RI       0x40
#define MSR_DCD      0x80

void serial_init(struct serial *s, const struct serial_ops *ops, void *opaque)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    s->ops = ops;
    s->opaque = opaque;
    s->mcr = MCR_OUT2;
    s->dll = 12; /* 9600 baud, as firmware would leave it */
}

static uint8_t serial_iir(const struct serial *s)
{
    uint8_t fifo = (s->fcr & FCR_ENABLE) ? IIR_FIFO : 0;
    if ((s->ier & IER_RDI) && s->rx_count)
        return fifo | IIR_RDI;
    if ((s->ier & IER_THRI) && s->thri_pending)
        return fifo | IIR_THRI;
    return fifo | IIR_NO_INT;
}

static void serial_update_irq(struct serial *s)
{
    int level = !(serial_iir(s) & IIR_NO_INT);
    if (level != s->irq_level) {
        s->irq_level = level;
        s->ops->set_irq(s->opaque, level);
    }
}

static void rx_push(struct serial *s, uint8_t byte)
{
    if (s->rx_count < SERIAL_RX_FIFO) {
        s->rx[(s->rx_head + s->rx_count) % SERIAL_RX_FIFO] = byte;
        s->rx_count++;
    }
}

static uint8_t rx_pop(struct serial *s)
{
    if (!s->rx_count)
        return 0;
    uint8_t b = s->rx[s->rx_head];
    s->rx_head = (s->rx_head + 1) % SERIAL_RX_FIFO;
    if (--s->rx_count == 0 && s->ops->rx_ready)
        s->ops->rx_ready(s->opaque);
    return b;
}

static uint8_t serial_msr(const struct serial *s)
{
    if (!(s->mcr & MCR_LOOP))
        return MSR_DCD | MSR_DSR | MSR_CTS;
    /* Loopback wires the modem outputs back to the inputs (16550 data sheet). */
    return ((s->mcr & MCR_DTR) ? MSR_DSR : 0) | ((s->mcr & MCR_RTS) ? MSR_CTS : 0) |
           ((s->mcr & MCR_OUT1) ? MSR_RI : 0) | ((s->mcr & MCR_OUT2) ? MSR_DCD : 0);
}

static uint8_t serial_read(struct serial *s, unsigned reg)
{
    bool dlab = s->lcr & LCR_DLAB;
    switch (reg) {
    case REG_RBR_THR_DLL: return dlab ? s->dll : rx_pop(s);
    case REG_IER_DLM:     return dlab ? s->dlm : s->ier;
    case REG_IIR_FCR: {
        uint8_t iir = serial_iir(s);
        /* Reading IIR while it reports THRE clears that cause. */
        if ((iir & 0x0f) == IIR_THRI)
            s->thri_pending = false;
        return iir;
    }
    case REG_LCR: return s->lcr;
    case REG_MCR: return s->mcr;
    case REG_LSR: return LSR_THRE | LSR_TEMT | (s->rx_count ? LSR_DR : 0);
    case REG_MSR: return serial_msr(s);
    default:      return s->scr;
    }
}

static void serial_write(struct serial *s, unsigned reg, uint8_t v)
{
    bool dlab = s->lcr & LCR_DLAB;
    switch (reg) {
    case REG_RBR_THR_DLL:
        if (dlab) {
            s->dll = v;
        } else {
            if (s->mcr & MCR_LOOP)
                rx_push(s, v);
            else
                s->ops->tx(s->opaque, v);
            s->thri_pending = true; /* sent at once: THR is empty again */
        }
        break;
    case REG_IER_DLM:
        if (dlab) {
            s->dlm = v;
        } else {
            /* Enabling THRI while THR is empty raises it at once. */
            if (!(s->ier & IER_THRI) && (v & IER_THRI))
                s->thri_pending = true;
            bool now_listening = !(s->ier & IER_RDI) && (v & IER_RDI);
            s->ier = v & IER_MASK;
            if (now_listening && s->rx_count == 0 && s->ops->rx_ready)
                s->ops->rx_ready(s->opaque);
        }
        break;
    case REG_IIR_FCR:
        s->fcr = v & FCR_ENABLE;
        if ((v & FCR_CLEAR_RX) && s->rx_count) {
            /* Input the host paused on a full FIFO may flow again. */
            s->rx_head = s->rx_count = 0;
            if (s->ops->rx_ready)
                s->ops->rx_ready(s->opaque);
        }
        break;
    case REG_LCR: s->lcr = v; break;
    case REG_MCR: s->mcr = v & MCR_MASK; break;
    case REG_SCR: s->scr = v; break;
    default: break; /* LSR and MSR are read-only */
    }
}

void serial_io(void *opaque, uint64_t offset, uint8_t *data, unsigned len, bool is_write)
{
    struct serial *s = opaque;
    /* The UART has byte registers; a wider access touches the first only
     * and a wider read returns zeros above it. */
    unsigned reg = (unsigned)(offset & (SERIAL_PORTS - 1));
    pthread_mutex_lock(&s->lock);
    if (is_write) {
        serial_write(s, reg, data[0]);
    } else {
        memset(data, 0, len);
        data[0] = serial_read(s, reg);
    }
    serial_update_irq(s);
    pthread_mutex_unlock(&s->lock);
}

void serial_save(struct serial *s, struct snap_serial *st)
{
    pthread_mutex_lock(&s->lock);
    *st = (struct snap_serial){.ier = s->ier, .lcr = s->lcr, .mcr = s->mcr, .scr = s->scr,
                               .dll = s->dll, .dlm = s->dlm, .fcr = s->fcr,
                               .thri_pending = s->thri_pending};
    pthread_mutex_unlock(&s->lock);
}

int serial_load(struct serial *s, const struct snap_serial *st)
{
    if (st->thri_pending > 1)
        return -EINVAL;
    pthread_mutex_lock(&s->lock);
    s->ier = st->ier;
    s->lcr = st->lcr;
    s->mcr = st->mcr;
    s->scr = st->scr;
    s->dll = st->dll;
    s->dlm = st->dlm;
    s->fcr = st->fcr;
    s->thri_pending = st->thri_pending;
    s->rx_head = s->rx_count = 0;
    serial_update_irq(s);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

size_t serial_receive(struct serial *s, const uint8_t *buf, size_t len)
{
    size_t n = 0;
    pthread_mutex_lock(&s->lock);
    while (n < len && (s->ier & IER_RDI) && s->rx_count < SERIAL_RX_FIFO)
        rx_push(s, buf[n++]);
    serial_update_irq(s);
    pthread_mutex_unlock(&s->lock);
    return n;
}
