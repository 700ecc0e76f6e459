/* A vmlinux in miniature for test_smp_unlock.c, made by the real
 * assembler and linker: the symbols the kernel's linker script gives
 * (_text, _etext, __smp_locks, __smp_locks_end) and .smp_locks entries
 * of each kind the kernel's one-CPU patch meets. */
    .text
    .globl _text
_text:
lock1:
    lock incl (%rax)          /* patched */
    .skip 4096
lock2:
    lock addq $1, (%rbx)      /* patched, on the next page */
not_lock:
    nop                       /* listed but not 0xf0: left alone */
    .globl _etext
_etext:
    int3                      /* past _etext, still in .text */

    .section .init.text, "ax"
init_lock:
    lock decl (%rcx)          /* outside _text.._etext: left alone */

    .section .smp_locks, "a"
    .globl __smp_locks
__smp_locks:
    .long lock1 - .
    .long not_lock - .
    .long init_lock - .
    .long 0                   /* padding: no entry */
    .long lock2 - .
    .globl __smp_locks_end
__smp_locks_end:
    .section .note.GNU-stack, "", @progbits
