/* kernel_print.c - pseudo-code (placeholder). */
#include "kernel.h"

void kernel_print(Buf *b, const Kernel *k, int color) { (void)b; (void)k; (void)color; }
void kernel_print_expr(Buf *b, const Kernel *k, const UOp *u) { (void)b; (void)k; (void)u; }
void kernel_print_buffers(Buf *b, const Kernel *k) { (void)b; (void)k; }
void kernel_print_uops(Buf *b, const Kernel *k) { (void)b; (void)k; }
