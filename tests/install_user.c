/* install_user.c - a C user of the installed libtessel.a: every room's public header from include/tessel/, a tensor program lowered, scheduled and printed as CUDA. */
#include <stdio.h>
#include <string.h>

#include <tessel/backends/backend.h>
#include <tessel/interp/dist/dist.h>
#include <tessel/interp/kernel/kernel.h>
#include <tessel/interp/sched/sched.h>
#include <tessel/interp/sched/tile_ir.h>
#include <tessel/layout/lower.h>
#include <tessel/viz/gv.h>
#include <tessel/viz/viz.h>

int
main(void)
{
	int64_t shape[2] = { 4, 8 };
	UCtx *c = uctx_new();
	Kernel *k = NULL;
	Schedule *s = NULL;
	Buf b;
	Err e;
	UOp *x, *y;
	int rc = 1;

	buf_init(&b);
	if (!c || !(x = tensor_param(c, "x", 0, shape, 2, DT_FLOAT32, NULL, &e))
	|| !(y = tensor_softmax(c, x, 1, &e)) || !(k = kernel_lower(y, NULL, &e))
	|| !(s = sched_new(k, y, &e)) || backend_source(&b, s->k, D_CUDA, &e) < 0)
		fprintf(stderr, "install_user: %s\n", e.msg);
	else if (!b.s || !strstr(b.s, "__global__"))
		fprintf(stderr, "install_user: no CUDA kernel in:\n%s\n", b.s ? b.s : "");
	else {
		printf("install_user: softmax (4, 8) as %zu bytes of CUDA\n", b.len);
		rc = 0;
	}
	buf_free(&b);
	sched_free(s);
	kernel_free(k);
	uctx_free(c);
	return rc;
}
