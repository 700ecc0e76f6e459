/* The guest kernel's uniprocessor lock patch, applied to a vmlinux file
 * ahead of time.
 *
 * A Linux 6.1 SMP kernel that boots with one CPU rewrites the lock prefix
 * (0xf0) of every atomic instruction listed in .smp_locks into a harmless
 * DS prefix (0x3e) (alternatives_smp_unlock, arch/x86/kernel/alternative.c).
 * Done at boot, each rewritten page of kernel text becomes a private copy
 * in every VM (about 490 pages here); done here, in the file, every
 * one-CPU VM shares the same page-cache pages, and the kernel's own pass
 * finds nothing left to change.  The rule is the kernel's own: entries
 * between __smp_locks and __smp_locks_end, each a 32-bit offset from
 * itself, 0 meaning none; only targets within _text.._etext; only a byte
 * that is 0xf0. */
#ifndef AIRLOCK_GUEST_SMP_UNLOCK_H
#define AIRLOCK_GUEST_SMP_UNLOCK_H

#include <stddef.h>
#include <stdint.h>

struct smp_unlock_stats {
    size_t entries;   /* slots between __smp_locks and __smp_locks_end */
    size_t patched;   /* 0xf0 -> 0x3e */
    size_t outside;   /* zero, or pointing outside _text.._etext (init code) */
    size_t not_lock;  /* inside the text but not 0xf0: left alone, as the kernel does */
    size_t pages;     /* distinct 4 KiB pages of text written */
};

/* Patches the ELF64 x86-64 vmlinux held in buf[0..size) in place.  Returns
 * 0, or -1 with a one-line reason in err (then buf is unchanged). */
int smp_unlock(uint8_t *buf, size_t size, struct smp_unlock_stats *st, char *err, size_t errlen);

#endif
