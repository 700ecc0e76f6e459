/* The probe guest: a tiny freestanding kernel that airlock boots through the
 * same loader as Linux.  It checks what the loader handed it, reports on
 * the serial port, does what its command line asks, and ends.  It runs on
 * kvm-pvm hosts (its kernel-mode code is a few hundred instructions), so the
 * monitor's real KVM path is tested without the nested lab.
 *
 * Command line words:
 *   probe.exit=reset|triplefault|none   how to end (default reset)
 *   probe.echo                          read a line from the serial port and
 *                                       print it back as "ECHO: ..."
 *   probe.unclaimed                     read a port no device owns, print it
 *   probe.rep                           print through rep outsb (string I/O)
 *   probe.virtio                        attack the virtio-blk device in slot 0
 *                                       (probe_virtio.c)
 *   probe.attack                        the attack suite against every device
 *                                       (probe_attack.c, probe_vsock.c)
 *   probe.prompt                        with probe.echo: print "PROMPT> " (no
 *                                       newline) before reading
 *   probe.spam                          print 1 KiB lines (rep outsb) forever
 * Built twice: 64-bit (Linux 64-bit entry) and 32-bit (PVH entry). */
#include <stdint.h>

#include "probe.h"

#define COM1 0x3f8
#define LSR_DR 0x01
#define LSR_THRE 0x20
#define I8042_CMD 0x64


static void putc_serial(char c)
{
    while (!(inb(COM1 + 5) & LSR_THRE))
        ;
    outb(COM1, (uint8_t)c);
}

void puts_serial(const char *s)
{
    while (*s)
        putc_serial(*s++);
}

void put_hex(uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    puts_serial("0x");
    for (int shift = 28; shift >= 0; shift -= 4)
        putc_serial(digits[(v >> shift) & 0xf]);
}

static void puts_rep(const char *s)
{
    unsigned long n = 0;
    while (s[n])
        n++;
    __asm__ volatile("rep outsb" : "+S"(s), "+c"(n) : "d"((uint16_t)COM1) : "memory");
}

/* Is `word` one of the space-separated words of cmdline? */
static int has_word(const char *cmdline, const char *word)
{
    for (const char *p = cmdline; *p;) {
        while (*p == ' ')
            p++;
        const char *w = word, *q = p;
        while (*w && *q == *w)
            w++, q++;
        if (!*w && (*q == ' ' || *q == 0))
            return 1;
        while (*p && *p != ' ')
            p++;
    }
    return 0;
}

static void echo_line(void)
{
    char buf[128];
    unsigned n = 0;
    outb(COM1 + 1, 0x01); /* IER.RDI: tell the host we listen (no IRQ handler: we poll) */
    for (;;) {
        while (!(inb(COM1 + 5) & LSR_DR))
            ;
        char c = (char)inb(COM1);
        if (c == '\n' || c == '\r' || n == sizeof(buf) - 1)
            break;
        buf[n++] = c;
    }
    buf[n] = 0;
    puts_serial("ECHO: ");
    puts_serial(buf);
    puts_serial("\n");
}

/* A guest that prints as fast as it can, forever: the console limits'
 * adversary.  rep outsb sends a whole line per exit. */
static void spam(void)
{
    static char line[1025];
    for (unsigned i = 0; i < 1023; i++)
        line[i] = (char)('a' + i % 26);
    line[1023] = '\n';
    for (;;)
        puts_rep(line);
}

static void probe_run(const char *entry, int info_ok, const char *cmdline, uint32_t memmap_entries)
{
    uint16_t cs;
    __asm__ volatile("mov %%cs, %0" : "=r"(cs));
    puts_serial("AIRLOCK-PROBE-OK entry=");
    puts_serial(entry);
    puts_serial(info_ok ? " info=ok" : " info=bad");
    puts_serial(" cs=");
    put_hex(cs);
    puts_serial(" memmap=");
    put_hex(memmap_entries);
    puts_serial(" cmdline=[");
    puts_serial(cmdline);
    puts_serial("]\n");
    if (has_word(cmdline, "probe.rep"))
        puts_rep("REP-OUTSB-OK\n");
    if (has_word(cmdline, "probe.unclaimed")) {
        puts_serial("UNCLAIMED-PORT=");
        put_hex(inb(0x2e8)); /* COM4's window: nobody home */
        puts_serial("\n");
    }
    if (has_word(cmdline, "probe.prompt"))
        puts_serial("PROMPT> ");
    if (has_word(cmdline, "probe.echo"))
        echo_line();
    if (has_word(cmdline, "probe.spam"))
        spam();
    if (has_word(cmdline, "probe.virtio"))
        probe_virtio();
    if (has_word(cmdline, "probe.attack"))
        probe_attack();
    if (has_word(cmdline, "probe.exit=none"))
        return;
    if (has_word(cmdline, "probe.exit=triplefault")) {
        /* Loading a selector past the GDT's end raises #GP; the boot IDT is
         * empty, so that becomes a double fault, then a triple fault. */
        __asm__ volatile("mov %0, %%ds" ::"r"((uint16_t)0x1238));
    }
    while (inb(I8042_CMD) & 0x02)
        ;
    outb(I8042_CMD, 0xfe);
}

#ifdef __x86_64__
/* Offsets in struct boot_params (Documentation/arch/x86/zero-page.rst). */
void probe_main64(const uint8_t *bp)
{
    uint32_t header = *(const uint32_t *)(bp + 0x202);
    uint16_t boot_flag = *(const uint16_t *)(bp + 0x1fe);
    uint32_t cmd_line_ptr = *(const uint32_t *)(bp + 0x228);
    uint8_t e820_entries = bp[0x1e8];
    int ok = header == 0x53726448 && boot_flag == 0xaa55 && cmd_line_ptr != 0;
    probe_run("64", ok, ok ? (const char *)(uintptr_t)cmd_line_ptr : "", e820_entries);
}
#else
struct hvm_start_info {
    uint32_t magic, version, flags, nr_modules;
    uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
    uint32_t memmap_entries, reserved;
};

void probe_main_pvh(const struct hvm_start_info *si)
{
    int ok = si->magic == 0x336ec578 && si->version >= 1 && si->cmdline_paddr != 0;
    probe_run("pvh", ok, ok ? (const char *)(uintptr_t)si->cmdline_paddr : "",
              ok ? si->memmap_entries : 0);
}
#endif
