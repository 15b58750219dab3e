/* triton.h - the Triton dialect's walk, shared by its files, one way down: triton.c (refusals, statements, stages, the module) -> triton_tile.c (register tiles written, tl.dot, bounded loops) -> triton_value.c (values, loads, frames, register tiles read). Private to backends/. */
#ifndef TESSEL_TRITON_H
#define TESSEL_TRITON_H

#include "../interp/sched/tile_ir.h"
#include "gpu.h"

enum {
	T_MAXTILE = 1 << 20,   /* elements of one tile: Triton's TRITON_MAX_TENSOR_NUMEL */
	T_UNROLL = 64,         /* tl.static_range up to this extent */
	T_BLOCKED = 4096,      /* elements of a tile whose outer axis is spread over programs */
	P_TOR = 8, P_TXOR = 9, P_TAND = 10, P_TSHIFT = 11, P_TADD = 12, P_TMUL = 13, P_TUNARY = 14,
	P_TCMP = 7, P_TATOM = 100
};

/* A loop as an axis of the statement being written. */
typedef struct Axis {
	const UOp *var;        /* the loop variable */
	UOp *as;               /* the variable that prints as the arange in the frame */
	const char *offs;      /* offs_j */
	int64_t n, pad;
	int masked;            /* its arange passes the extent somewhere */
} Axis;
/* An arange of a stage: offs = tl.arange(0, block), block = pad. */
typedef struct Ar {
	const char *var, *offs, *block;
	int64_t pad;
} Ar;

typedef struct TLaunch {
	char name[K_NAME + 24];
	int64_t grid[3];
	int ngrid;
	int *arg, narg;
	Ar *cx;                /* the stage's constexprs */
	int ncx;
} TLaunch;

/* Emit.aux while the Triton dialect walks a kernel. */
typedef struct TState {
	int num_warps, num_stages;   /* the launches' (BSourceOpts); 0: Triton's defaults */
	int wide;              /* the stage uses a buffer past 2^31 - 1 elements: int64 offsets */
	const char **pname;    /* per buffer: its pointer argument (x_ptr) */
	const char **rname;    /* per buffer: the variable of a register buffer's tile */
	TLaunch *l;
	int nl, capl;
	int mul;               /* tessel_mul is used (a product reduction) */
	/* the stage being written */
	EStage *S;
	Buf pre;               /* the stage's aranges, after the grid */
	Ar *ar;
	int nar, capar;
	PMap inner;            /* RANGE -> 1: an inner loop of a tile statement */
	PMap grid;             /* RANGE -> axis + 1: a loop that is a program id */
	int64_t gext[3];
	int ngrid;
	const UOp *blk;        /* a loop spread over program ids: blk_size of its iterations each */
	int64_t blk_size;
	PMap hoist;            /* node -> its name within the statement */
	PMap pure;             /* node -> 1 index arithmetic, 2 not */
	Axis fr[TILE_MAXLOOPS];
	int nfr;
	int stored, loops;     /* stores written so far in the stage; for loops open */
} TState;

/* A value being written: its text and the precedence of its top operator. */
typedef struct Tx {
	Buf s;
	int prec;
} Tx;

/* triton_value.c */
int tr_oom(Emit *E);
const char *tr_stname(Emit *E, int st);
const char *tr_ttype(DType t);
int tr_isfloat(DType t);
int64_t tr_pow2(int64_t n);
int tr_pure(TState *T, const UOp *u, int depth);      /* index arithmetic (uop_print writes it) */
void tr_tx_init(Tx *x);
void tr_operand(Buf *b, const Tx *x, int prec);       /* x, parenthesized below precedence prec */
void tr_call(Tx *x, const char *f, Tx *s, int n);
void tr_binop(Tx *x, Tx *l, const char *op, Tx *r, int p);
unsigned tr_axes_of(TState *T, const UOp *u);         /* the frame axes u's variables are */
int tr_mask_text(TState *T, Buf *b, unsigned m);      /* the mask of the padded axes in m */
int tr_value(Emit *E, const UOp *u, Tx *x, int depth);
int tr_pointer(Emit *E, const UOp *ix, Buf *b, unsigned *axes, int depth);   /* x_ptr + offsets */
int tr_hoist(Emit *E, UOp *const *roots, int n, int ind);
const Ar *tr_arange(Emit *E, const UOp *v, int64_t pad);
int tr_frame(Emit *E, int st, const UOp *const *r, int n);   /* the loops r as the frame's axes */
UOp *tr_in_frame(Emit *E, UOp *u);                    /* u with the frame's variables as aranges */

/* register buffers: each access covers the tile, its frame positions in at[] */
int tr_is_reg(Emit *E, const UOp *ix);                /* an access to a register buffer */
int tr_reg_axes(Emit *E, const UOp *ix, int *at);
int tr_reg_load(Emit *E, const UOp *ix, Tx *x);

/* triton_tile.c */
int tr_reg_put(Emit *E, const UOp *s, const Tx *v, const Tx *gate, int ind);
int tr_dot(Emit *E, EStage *S, const TileStmt *ts, Tx *x, int ind);
int tr_bounded(Emit *E, const UOp *s, int ind);

#endif
