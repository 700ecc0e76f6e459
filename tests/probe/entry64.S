/* Linux boot protocol 64-bit entry: long mode, RSI = boot_params. */
    .section .text.entry, "ax"
    .code64
    .globl _start
_start:
    lea     probe_stack_top(%rip), %rsp
    mov     %rsi, %rdi          /* probe_main64(boot_params) */
    call    probe_main64
1:  hlt
    jmp     1b

    .bss
    .balign 16
    .skip   16384
probe_stack_top:
