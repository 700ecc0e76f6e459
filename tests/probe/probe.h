/* What the probe's parts share: port I/O, the serial console, MMIO. */
#ifndef AIRLOCK_PROBE_H
#define AIRLOCK_PROBE_H

#include <stdint.h>

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }

static inline uint32_t mmio_read32(uint64_t addr) { return *(volatile uint32_t *)(uintptr_t)addr; }
static inline void mmio_write32(uint64_t addr, uint32_t v) { *(volatile uint32_t *)(uintptr_t)addr = v; }

void puts_serial(const char *s);
void put_hex(uint32_t v);

/* Runs the virtio-blk attack suite against the device in slot 0 and prints
 * one line per case and a VIRTIO-DONE summary. */
void probe_virtio(void);

/* The attack suite against every device (probe_attack.c): one line per
 * case and an ATTACK-DONE summary. */
void probe_attack(void);

#endif
