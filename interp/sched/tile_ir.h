/* tile_ir.h - the tile view: Neptune's loop-to-tile translation of a kernel, printed in its tile IR. */
#ifndef TESSEL_TILE_IR_H
#define TESSEL_TILE_IR_H

#include "sched.h"

/* tile_ir.c */
/*
** Neptune's tile IR (Figure 13 of the paper) is the loop-scalar pseudo-code
** (kernel_print) in which every perfect nest of unannotated loops around one
** store that computes on tiles is replaced by one tile store:
**
**   for i, j in grid(2, 3):
**     exp2d[i*4 : i*4 + 4, j*5 : j*5 + 5] = exp(permute(inp[j*5 : j*5 + 5, i*4 : i*4 + 4], order=(1, 0)))
**     max1d[i*4 : i*4 + 4] = max(max1d[i*4 : i*4 + 4], reduce(max, exp2d[i*4 : i*4 + 4, j*5 : j*5 + 5], dim=1))
**
** Three steps per store (Appendix E). AST partitioning: the inner part is the
** longest run of loops above the store that are each the only statement of
** the one above (no sequence, no guard between them) and carry no annotation
** (LOOP or REDUCE, bound to no hardware axis). Access function relaxation:
** every index of the store and of its value must be affine in the inner
** loops' variables with one inner variable per dimension and each variable in
** one dimension at most (V 1-sparse), with a positive step; a dimension with
** base + lam*v over extent n becomes the tile base : base + lam*(n-1) + 1
** (: lam when lam != 1); inner variables may appear in no gate, and in a
** value outside an access they are index tiles (arange(0, n) in their frame
** position: masks). Loops leave the inner part from the top until that holds.
** Dimension order reconciliation: the value's tiles are reordered to the
** stored tile's dimensions followed by the reduced ones: None where a tile
** lacks one (broadcast), permute(t, order=(...)) where its dimensions come in
** another order; the loops that index the value and not the stored tile are
** reduced, which takes an update X[I] = X[I] op v (op add, mul, max or min)
** and prints as the loop-scalar printer prints the update, v replaced by
** reduce(op, v, dim=d): `X[T] += reduce(+, v, dim=1)`,
** `X[T] = max(X[T], reduce(max, v, dim=1))`. dim counts the dimensions of
** v's tile. Everything else prints as kernel_print prints it (no colours).
*/
int tile_ir_print(Buf *b, const Kernel *k, Err *e);
/* The inner loops (RANGE nodes, outermost first) of the partition around
** store, a store of stage st, after relaxation: at most max stored; their
** count (0 when the store stays a scalar statement), or -1 with e set. */
int tile_ir_inner(const Kernel *k, int st, const UOp *store, const UOp **out, int max, Err *e);

/*
** The tile statement a store becomes, as a structure (for emitters that
** write tiles in another language: backends/triton.c). loop[0..n-1] are the
** inner loops (RANGE nodes) in the order of the value's dimensions: the
** stored tile's first (nstored, in the order of the stored buffer's
** dimensions), then the reduced ones, in loop order. A reduction (n >
** nstored) is an update X[I] = X[I] op other: acc is the load of X[I] and op
** the update's operator (OP_ADD, OP_MUL, OP_MAX or OP_MIN); acc and other are
** also set for an update that reduces nothing. n is 0 when the store stays
** a scalar statement. Returns n, or -1 with e set.
*/
enum { TILE_MAXLOOPS = 16 };
typedef struct TileStmt {
	int n, nstored;
	const UOp *loop[TILE_MAXLOOPS];
	const UOp *acc, *other;
	Op op;
} TileStmt;
int tile_ir_stmt(const Kernel *k, int st, const UOp *store, TileStmt *out, Err *e);

#endif
