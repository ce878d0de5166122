// The thn language: a Python subset (see docs/language.md).
//
// The lexer emits NEWLINE tokens that carry the next line's indentation;
// frontend/tokens.cpp turns them into NEWLINE / INDENT / DEDENT, drops them
// inside brackets and after blank lines, and reports indentation errors.
// Operator precedence is Python's: the alternatives of `expr` are listed from
// the tightest-binding to the loosest.
grammar Thn;

tokens { INDENT, DEDENT }

file_input : (NEWLINE | stmt)* EOF ;
// An f-string's replacement field, parsed on its own (frontend/strings.cpp).
eval_input : exprlist NEWLINE* EOF ;

stmt : simple_stmts | compound_stmt ;

simple_stmts : simple_stmt (';' simple_stmt)* ';'? NEWLINE ;

simple_stmt
  : exprlist augassign exprlist                              # AugAssignStmt
  | lhs=star_expr ':' annotation=expr ('=' value=exprlist)?    # AnnAssignStmt
  | exprlist ('=' exprlist)*                                 # ExprStmt
  | 'pass'                                                   # PassStmt
  | 'break'                                                  # BreakStmt
  | 'continue'                                               # ContinueStmt
  | 'return' exprlist?                                       # ReturnStmt
  | 'import' dotted_as_name (',' dotted_as_name)*            # ImportStmt
  | 'from' dotted_name 'import' import_names                 # FromImportStmt
  | 'assert' expr (',' expr)?                                # AssertStmt
  | 'raise' (expr ('from' cause=expr)?)?                      # RaiseStmt
  | 'del' exprlist                                            # DelStmt
  | kw=('global' | 'nonlocal') NAME (',' NAME)*               # ScopeStmt
  ;

augassign : op=('+=' | '-=' | '*=' | '/=' | '//=' | '%=' | '**=' | '@=' | '&=' | '|=' | '^=' | '<<=' | '>>=') ;

dotted_name : NAME ('.' NAME)* ;
dotted_as_name : dotted_name ('as' NAME)? ;
import_names
  : '*'
  | '(' import_as_name (',' import_as_name)* ','? ')'
  | import_as_name (',' import_as_name)*
  ;
import_as_name : NAME ('as' NAME)? ;

compound_stmt : if_stmt | while_stmt | for_stmt | try_stmt | with_stmt | funcdef | classdef | decorated ;

if_stmt : 'if' expr ':' block ('elif' expr ':' block)* ('else' ':' else_block=block)? ;
while_stmt : 'while' expr ':' block ('else' ':' else_block=block)? ;
for_stmt : 'for' targetlist 'in' exprlist ':' block ('else' ':' else_block=block)? ;
try_stmt
  : 'try' ':' block ((except_clause ':' block)+ ('else' ':' else_block=block)? ('finally' ':' finally_block=block)?
                    | 'finally' ':' finally_block=block)
  ;
except_clause : 'except' (expr ('as' NAME)?)? ;
with_stmt : 'with' expr ('as' NAME)? (',' expr ('as' NAME)?)* ':' block ;
classdef : 'class' NAME ('(' arglist? ')')? ':' block ;
decorated : decorator+ (funcdef | classdef) ;
decorator : '@' expr NEWLINE ;
funcdef : 'def' NAME '(' paramlist? ')' ('->' expr)? ':' block ;
paramlist : param (',' param)* ','? ;
// `NAME: annotation` is accepted and ignored, as in Python at run time.
param : NAME (':' annotation=expr)? ('=' dflt=expr)? | star='*' NAME? | dstar='**' NAME | slash='/' ;
lambda_params : lambda_param (',' lambda_param)* ','? ;
lambda_param : NAME ('=' dflt=expr)? | star='*' NAME? | dstar='**' NAME ;

block : simple_stmts | NEWLINE INDENT stmt+ DEDENT ;

// Loop and comprehension targets: names and (nested) tuples of names.
targetlist : target (',' target)* trailing=','? ;
target : NAME | '(' targetlist ')' | '[' targetlist ']' ;

// Items of a tuple or list display, or of an assignment's target list: an
// item may be starred (`[*xs, y]`, `a, *rest = xs`); the builder rejects a
// star anywhere else.
exprlist : star_expr (',' star_expr)* trailing=','? ;
star_expr : star='*'? expr ;

expr
  : atom trailer*                                             # PrimaryExpr
  | <assoc=right> expr op='**' expr                           # BinaryExpr
  | op=('+' | '-' | '~') expr                                 # UnaryExpr
  | expr op=('*' | '/' | '//' | '%' | '@') expr               # BinaryExpr
  | expr op=('+' | '-') expr                                  # BinaryExpr
  | expr op=('<<' | '>>') expr                                # BinaryExpr
  | expr op='&' expr                                          # BinaryExpr
  | expr op='^' expr                                          # BinaryExpr
  | expr op='|' expr                                          # BinaryExpr
  | expr comp_op expr                                         # CompareExpr
  | 'not' expr                                                # NotExpr
  | expr op='and' expr                                        # BoolExpr
  | expr op='or' expr                                         # BoolExpr
  | <assoc=right> expr 'if' expr 'else' expr                  # CondExpr
  ;

comp_op : 'not' 'in' | 'is' 'not' | '<' | '>' | '==' | '>=' | '<=' | '!=' | 'in' | 'is' ;

atom
  : '(' ')'                                                   # EmptyTupleAtom
  | '(' expr comp_for ')'                                     # GeneratorAtom
  | '(' exprlist ')'                                          # ParenAtom
  | '[' ']'                                                   # EmptyListAtom
  | '[' expr comp_for ']'                                     # ListCompAtom
  | '[' exprlist ']'                                          # ListAtom
  | '{' '}'                                                   # EmptyDictAtom
  | '{' dict_item (',' dict_item)* ','? '}'                   # DictAtom
  | '{' key=expr ':' value=expr comp_for '}'                  # DictCompAtom
  | '{' star_expr (',' star_expr)* ','? '}'                   # SetAtom
  | '{' expr comp_for '}'                                     # SetCompAtom
  | NAME                                                      # NameAtom
  | NUMBER                                                    # NumberAtom
  | STRING+                                                   # StringAtom
  | '...'                                                     # EllipsisAtom
  | 'None'                                                    # NoneAtom
  | 'True'                                                    # TrueAtom
  | 'False'                                                   # FalseAtom
  | 'lambda' lambda_params? ':' expr                          # LambdaAtom
  ;

dict_item : key=expr ':' value=expr | '**' expr ;

comp_for : 'for' targetlist 'in' expr ('if' expr)* comp_for? ;

trailer
  : '(' arglist? ')'                                          # CallTrailer
  | '[' subscript (',' subscript)* trailing=','? ']'          # IndexTrailer
  | '.' NAME                                                  # AttrTrailer
  ;

arglist : argument (',' argument)* ','? ;
argument : NAME '=' expr | star='*' expr | dstar='**' expr | expr comp_for? ;

subscript : expr | lower=expr? ':' upper=expr? (':' step=expr?)? ;

// ---- lexer ----

NUMBER
  : '0' [xX] ('_'? [0-9a-fA-F])+
  | '0' [oO] ('_'? [0-7])+
  | '0' [bB] ('_'? [01])+
  | DIGITS '.' DIGITS? EXPONENT?
  | '.' DIGITS EXPONENT?
  | DIGITS EXPONENT?
  ;
fragment DIGITS : [0-9] ('_'? [0-9])* ;
fragment EXPONENT : [eE] [+-]? DIGITS ;

STRING
  : PREFIX? '"""' ( '\\' . | . )*? '"""'
  | PREFIX? '\'\'\'' ( '\\' . | . )*? '\'\'\''
  | PREFIX? '"' ( '\\' . | ~[\\\r\n"] )* '"'
  | PREFIX? '\'' ( '\\' . | ~[\\\r\n'] )* '\''
  ;
// r, f, fr/rf; u, and b (which the builder rejects: thn has no bytes).
fragment PREFIX : [rRfFuUbB] [rRfFbB]? ;
// A string that reaches the end of its line: reported as a syntax error.
UNTERMINATED_STRING
  : PREFIX? '"' ( '\\' . | ~[\\\r\n"] )*
  | PREFIX? '\'' ( '\\' . | ~[\\\r\n'] )*
  ;

NAME : [a-zA-Z_] [a-zA-Z_0-9]* ;

NEWLINE : ( '\r'? '\n' | '\r' | '\f' ) [ \t\f]* ;

SKIP_ : ( [ \t\f]+ | '#' ~[\r\n]* | '\\' [ \t]* ( '\r'? '\n' | '\r' ) ) -> skip ;

// Anything else is reported as a syntax error by the token filter.
ERROR_CHAR : . ;
