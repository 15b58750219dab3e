/* algebra.h - real algebra over float UOps: a canonical form that decides the identities reduction fusion needs. */
#ifndef TESSEL_ALGEBRA_H
#define TESSEL_ALGEBRA_H

#include "uop.h"

/*
** Float expressions (ADD, SUB, NEG, MUL, RECIP, EXP2, LOG2, MAX, MIN and
** opaque atoms: loads, symbols, casts, comparisons, wheres) are read as
** real-valued functions and brought to a canonical form, so that two
** expressions equal as real functions on the domain where both are defined
** (positive arguments of log2 and of the recip of a sum) have the same
** node. The canonical form:
**
**   a sum      c0 + k1*m1 + k2*m2 + ...  (monomials in a fixed structural order)
**   a monomial b1^e1 * b2^e2 * ...       (integer powers, negative ones as recip)
**   exp2(s)    s a canonical sum; products of exp2 merge (exp2 a * exp2 b =
**              exp2(a + b)); log2 terms of s with integer coefficients leave
**              it (exp2(k log2 x + s) = x^k exp2(s)); log2(exp2 s) = s
**   max, min   arguments sorted; a sum with a max term distributes over it
**              (max(a, b) + c = max(a + c, b + c)), and so does a product with
**              a factor that is provably positive (max(a, b) * p = max(ap, bp))
**
** Products distribute over sums (the expanded form). The rewrite is one rule
** run by uop_rewrite (alg_rules); CAST between float dtypes is kept as an
** atom. Constants are doubles: the form decides identities of real
** arithmetic, not of float32 rounding.
*/
extern const URule alg_rules[];
extern const int alg_nrules;

/* u in canonical form. */
int alg_normalize(UCtx *c, UOp *u, UOp **out, Err *e);
/* 1 when a and b have the same canonical form, 0 when not, -1 on error. */
int alg_equal(UCtx *c, UOp *a, UOp *b, Err *e);
/* A symbolic real named name (a float VAR), for the unknowns of a derivation. */
UOp *alg_sym(UCtx *c, const char *name);
/* u provably > 0: a positive constant, exp2 of anything, products, sums and
** recips of such, a max with such an argument. */
int alg_positive(const UOp *u);
/* u with exp2(k * log2(e) * x) written exp2(x * log2(e)) where every term of
** the exponent carries the factor log2(e), so printers show exp(x). */
UOp *alg_display(UCtx *c, UOp *u);

#endif
