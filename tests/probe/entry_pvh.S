/* Xen PVH entry: 32-bit protected mode, paging off, EBX = hvm_start_info.
 * The note below is how a loader finds this entry (XEN_ELFNOTE_PHYS32_ENTRY,
 * type 18), exactly as Linux's arch/x86/platform/pvh/head.S announces it. */
    .section .text.entry, "ax"
    .code32
    .globl _start
_start:
    mov     $probe_stack_top, %esp
    push    %ebx                /* probe_main_pvh(start_info) */
    call    probe_main_pvh
1:  hlt
    jmp     1b

    .section .note.Xen, "a", @note
    .balign 4
    .long   4                   /* namesz */
    .long   4                   /* descsz */
    .long   18                  /* XEN_ELFNOTE_PHYS32_ENTRY */
    .asciz  "Xen"
    .long   _start

    .bss
    .balign 16
    .skip   16384
probe_stack_top:
