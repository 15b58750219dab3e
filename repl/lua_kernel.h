/* lua_kernel.h - the kernel table's userdata and staging, shared by lua_kernel.c, lua_kernel_stmt.c and lua_kernel_run.c. */
#ifndef TESSEL_LUA_KERNEL_H
#define TESSEL_LUA_KERNEL_H

#include <lua.h>

#include "../interp/kernel/kernel.h"

#define KERNEL  "kernel.Kernel"
#define KBUFFER "kernel.Buffer"
#define STAGING "tessel.kernel.staging"   /* registry: the kernel a stage is being recorded into */

/*
** Kernels written in Lua are staged, as Terra stages: the Lua code of a stage
** runs once, with symbolic loop indices, and what it does is recorded as
** UOps. A loop is a generic for over kernel.range: the iterator's first call
** opens the loop and returns its variable, its second call closes it with the
** statements recorded in between. Stores (B[{i, j}] = v) append to the
** innermost open block; loads and arithmetic build values.
*/
typedef struct Frame {
	int kind;           /* 0 the stage, 1 a loop, 2 an if */
	UOp *head;          /* the RANGE or the gate */
	UOp **s;
	int n, cap;
} Frame;

typedef struct LKernel {
	Kernel *k;
	Frame *f;
	int nf, capf;
	UOp *grid[3], *blk[3];   /* the bound ranges of kernel.new{grid=, block=} */
} LKernel;

typedef struct LBuf {
	int b;
} LBuf;

/* lua_kernel.c */
LKernel *lk_checkk(lua_State *L, int i);   /* the kernel at i; raises when it was freed */
int lk_err(lua_State *L, const Err *e);    /* raises e's message */
/* Values: push u as a value of the kernel at index ki; the kernel a value or
** buffer at i belongs to, pushed (NULL, nothing pushed, when i is neither);
** the operand at i in the kernel at ki (a value of it, a uop expression, a
** number or a boolean; like is the dtype of a number's constant); the stack
** index of the kernel of the first value or buffer among arguments 1..n,
** else of the kernel being staged, pushed. */
void lk_pushvalue(lua_State *L, UOp *u, int ki);
LKernel *lk_owner(lua_State *L, int i);
UOp *lk_operand(lua_State *L, int i, int ki, DType like, const char *what);
int lk_find_kernel(lua_State *L, int n, const char *what);
/* Recording: the kernel whose stage is being recorded (raises outside
** k:stage); append statement s to its innermost open block; open a block
** (a Frame of that kind and head); close the innermost one into its
** statement, appended to the block around it. */
LKernel *lk_staging(lua_State *L, const char *what);
void lk_append(lua_State *L, LKernel *x, UOp *s);
void lk_push_frame(lua_State *L, LKernel *x, int kind, UOp *head);
void lk_pop_frame(lua_State *L, LKernel *x);
/* Buffer elements: the indices at i (a table {i, j} or one operand) into idx,
** their number returned; the element of the buffer at bi that the key at
** keyi names (as many indices as the buffer has dimensions). */
int lk_indices(lua_State *L, int i, int ki, UOp **idx, const char *what);
UOp *lk_access(lua_State *L, int bi, int keyi, int ki, const char *what);

#endif
