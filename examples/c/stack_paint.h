/* Stack use of a call, for the bare-metal examples (cortex-m/, riscv/): paint
 * the words below the current stack pointer, make the call, then count how far
 * down the paint was overwritten. Included by each board's startup.c, which
 * runs the calls on one stack with no interrupts. */
#ifndef EDGEREG_STACK_PAINT_H
#define EDGEREG_STACK_PAINT_H

#include <stdint.h>

#if defined(__riscv)
#define EDGEREG_READ_SP(sp) __asm__ volatile("mv %0, sp" : "=r"(sp))
#else /* Arm */
#define EDGEREG_READ_SP(sp) __asm__ volatile("mov %0, sp" : "=r"(sp))
#endif

#define PAINT_WORDS 1024u

void stack_paint(void) {
    uint32_t *sp;
    EDGEREG_READ_SP(sp);
    for (uint32_t i = 16; i < PAINT_WORDS; i++) sp[-(int32_t)i] = 0xC0FFEE11u;
}

unsigned stack_used(void) {
    uint32_t *sp;
    EDGEREG_READ_SP(sp);
    uint32_t i = PAINT_WORDS - 1;
    while (i >= 16 && sp[-(int32_t)i] == 0xC0FFEE11u) i--;
    return 4u * (i - 15u); /* bytes below the caller's frame that were written */
}

#endif
