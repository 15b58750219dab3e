/* lua_tensor.h - the tensor userdata and the argument helpers lua_tensor.c shares with lua_tensor_ops.c. */
#ifndef TESSEL_LUA_TENSOR_H
#define TESSEL_LUA_TENSOR_H

#include <lua.h>

#include "../interp/tensor/tensor.h"

#define TENSOR "tessel.Tensor"

/*
** A tensor is a UOp in the arena of a context userdata (the tensor's user
** value keeps the arena alive); new nodes go into the current context. A
** binding calls lt_current first (it pushes the context: pass that stack
** index to lt_push), takes its operands with lt_in_ctx or lt_operand, builds
** with one call into interp/tensor/, and pushes the result with lt_push,
** which raises with the Err's message when the node is NULL.
*/
typedef struct TCtxBox {
	UCtx *c;
	int next_slot;
} TCtxBox;

typedef struct LTensor {
	UOp *u;
} LTensor;

/* lua_tensor.c */
TCtxBox *lt_current(lua_State *L);                        /* the current context, pushed */
void lt_push(lua_State *L, UOp *u, int ci, const Err *e);   /* a tensor of the context at ci */
LTensor *lt_check(lua_State *L, int i);                   /* the tensor at i (raises otherwise) */
UOp *lt_in_ctx(lua_State *L, int i, UCtx *c);             /* its UOp in context c (imported) */
/* A tensor or a Lua number or boolean as an operand next to a tensor of dtype like:
** an integer takes like's dtype, a float next to an integer tensor is float32. */
UOp *lt_operand(lua_State *L, int i, UCtx *c, DType like, const char *what);
DType lt_like_of(lua_State *L, int a, int b);             /* the dtype of the first tensor of a, b */
int lt_get_shape(lua_State *L, int i, int64_t *s, const char *what);   /* a table or integers from i on */
DType lt_get_dtype(lua_State *L, int i, DType def, const char *what);  /* a dtype name or def when nil */

/* lua_tensor_ops.c: tinygrad's methods of tensor_math.c, tensor_shape.c and
** tensor_nn.c, registered into the tensor table (at the stack top) and its methods */
void tessel_open_tensor_ops(lua_State *L);
/* tinygrad's window arguments (lua_tensor_ops.c): an integer for each of nk axes or a table of nk;
** opts.key as such, def when absent; opts.padding in tinygrad's three forms into before/after */
void lt_nk_ints(lua_State *L, int i, int nk, int64_t *out, const char *what, const char *name);
void lt_nk_field(lua_State *L, int o, const char *key, int nk, const int64_t *def, int64_t *out, const char *what);
void lt_pads_field(lua_State *L, int o, int nk, int64_t *before, int64_t *after, const char *what);
void tessel_open_tensor_resample(lua_State *L);   /* lua_tensor_resample.c: those of tensor_resample.c */
void tessel_open_tensor_linalg(lua_State *L);   /* lua_tensor_linalg.c: qr, svd, newton_schulz */

#endif
