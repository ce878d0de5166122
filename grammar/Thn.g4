// The thn language: a Python subset (see ../shared/LANGUAGE.md).
//
// The lexer emits NEWLINE tokens that carry the next line's indentation;
// frontend/tokens.cpp turns them into NEWLINE / INDENT / DEDENT, drops them
// inside brackets and after blank lines, and reports indentation errors.
// Operator precedence is Python's: the alternatives of `expr` are listed from
// the tightest-binding to the loosest.
grammar Thn;

tokens { INDENT, DEDENT }

file_input : (NEWLINE | stmt)* EOF ;

stmt : simple_stmts | compound_stmt ;

simple_stmts : simple_stmt (';' simple_stmt)* ';'? NEWLINE ;

simple_stmt
  : exprlist augassign exprlist                              # AugAssignStmt
  | exprlist ('=' exprlist)*                                 # ExprStmt
  | 'pass'                                                   # PassStmt
  | 'break'                                                  # BreakStmt
  | 'continue'                                               # ContinueStmt
  | 'return' exprlist?                                       # ReturnStmt
  | 'import' dotted_as_name (',' dotted_as_name)*            # ImportStmt
  | 'from' dotted_name 'import' import_names                 # FromImportStmt
  | 'assert' expr (',' expr)?                                # AssertStmt
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

compound_stmt : if_stmt | while_stmt | for_stmt | funcdef | decorated ;

if_stmt : 'if' expr ':' block ('elif' expr ':' block)* ('else' ':' else_block=block)? ;
while_stmt : 'while' expr ':' block ;
for_stmt : 'for' targetlist 'in' exprlist ':' block ;
decorated : decorator+ funcdef ;
decorator : '@' expr NEWLINE ;
funcdef : 'def' NAME '(' paramlist? ')' ('->' expr)? ':' block ;
paramlist : param (',' param)* ','? ;
param : NAME ('=' expr)? | star='*' ;

block : simple_stmts | NEWLINE INDENT stmt+ DEDENT ;

// Loop and comprehension targets: names and (nested) tuples of names.
targetlist : target (',' target)* trailing=','? ;
target : NAME | '(' targetlist ')' | '[' targetlist ']' ;

exprlist : expr (',' expr)* trailing=','? ;

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
  | '{' (~'}')* '}'                                           # DictAtom
  | NAME                                                      # NameAtom
  | NUMBER                                                    # NumberAtom
  | STRING+                                                   # StringAtom
  | '...'                                                     # EllipsisAtom
  | 'None'                                                    # NoneAtom
  | 'True'                                                    # TrueAtom
  | 'False'                                                   # FalseAtom
  | 'lambda' (~':')* ':' expr                                 # LambdaAtom
  ;

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
  : [rR]? '"""' ( '\\' . | . )*? '"""'
  | [rR]? '\'\'\'' ( '\\' . | . )*? '\'\'\''
  | [rR]? '"' ( '\\' . | ~[\\\r\n"] )* '"'
  | [rR]? '\'' ( '\\' . | ~[\\\r\n'] )* '\''
  ;
// A string that reaches the end of its line: reported as a syntax error.
UNTERMINATED_STRING
  : [rR]? '"' ( '\\' . | ~[\\\r\n"] )*
  | [rR]? '\'' ( '\\' . | ~[\\\r\n'] )*
  ;

NAME : [a-zA-Z_] [a-zA-Z_0-9]* ;

NEWLINE : ( '\r'? '\n' | '\r' | '\f' ) [ \t\f]* ;

SKIP_ : ( [ \t\f]+ | '#' ~[\r\n]* | '\\' [ \t]* ( '\r'? '\n' | '\r' ) ) -> skip ;

// Anything else is reported as a syntax error by the token filter.
ERROR_CHAR : . ;
