/* ops.h - the properties of every UOp op, one line each (QBE's ops.h style). */
/*
** Include with O defined:
**   O(NAME, name, arity, flags, identity, infix, c, python, lua, pinfix, pc, ppy, plua)
** arity    number of sources (-1: variable, for the tensor ops to come)
** flags    U_COMM commutative, U_ASSOC associative, U_CMP result is bool,
**          U_ALU elementwise arithmetic, U_LEAF no sources
** identity e with x op e == x (and e op x == x when commutative); U_NOID if none
** infix..lua the operator in each syntax ("" for ops printed as calls or specially)
** pinfix..plua  binding strength in that syntax (higher binds tighter; 0 = atom/call)
** Adding an op touches one line here, one case in minmax.c and one in eval.c.
*/
/* leaves */
O(CONST, "const", 0, U_LEAF, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(VAR,   "var",   0, U_LEAF, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* unary */
O(NEG,   "neg",   1, U_ALU,  U_NOID, "-", "-", "-", "-", 14, 14, 14, 11)
O(CAST,  "cast",  1, U_ALU,  U_NOID, "", "", "", "", 0, 0, 0, 0)
/* binary arithmetic */
O(ADD,   "add",   2, U_ALU | U_COMM | U_ASSOC, 0, "+", "+", "+", "+", 12, 12, 12, 9)
O(SUB,   "sub",   2, U_ALU,  0,      "-", "-", "-", "-", 12, 12, 12, 9)
O(MUL,   "mul",   2, U_ALU | U_COMM | U_ASSOC, 1, "*", "*", "*", "*", 13, 13, 13, 10)
O(IDIV,  "idiv",  2, U_ALU,  1,      "//", "/", "//", "//", 13, 13, 13, 10)
O(MOD,   "mod",   2, U_ALU,  U_NOID, "%", "%", "%", "%", 13, 13, 13, 10)
O(MIN,   "min",   2, U_ALU | U_COMM | U_ASSOC, U_NOID, "", "", "", "", 0, 0, 0, 0)
O(MAX,   "max",   2, U_ALU | U_COMM | U_ASSOC, U_NOID, "", "", "", "", 0, 0, 0, 0)
/* comparisons: bool results */
O(CMPLT, "cmplt", 2, U_ALU | U_CMP, U_NOID, "<", "<", "<", "<", 7, 10, 7, 3)
O(CMPNE, "cmpne", 2, U_ALU | U_CMP | U_COMM, U_NOID, "!=", "!=", "!=", "~=", 7, 9, 7, 3)
O(CMPEQ, "cmpeq", 2, U_ALU | U_CMP | U_COMM, U_NOID, "==", "==", "==", "==", 7, 9, 7, 3)
/* select */
O(WHERE, "where", 3, U_ALU,  U_NOID, "", "", "", "", 0, 3, 3, 0)
/* bitwise (logical on bool) */
O(AND,   "and",   2, U_ALU | U_COMM | U_ASSOC, -1, "&", "&", "&", "&", 10, 8, 10, 6)
O(OR,    "or",    2, U_ALU | U_COMM | U_ASSOC, 0, "|", "|", "|", "|", 8, 6, 8, 4)
O(XOR,   "xor",   2, U_ALU | U_COMM | U_ASSOC, 0, "^", "^", "^", "~", 9, 7, 9, 5)
O(SHL,   "shl",   2, U_ALU,  0,      "<<", "<<", "<<", "<<", 11, 11, 11, 7)
O(SHR,   "shr",   2, U_ALU,  0,      ">>", ">>", ">>", ">>", 11, 11, 11, 7)
