// The grammar of the evoc language (.evo files). The C++ parser is generated
// from it at build time; the frontend turns its parse tree into evoc's AST.
grammar Evo;

program : item* EOF ;

item
  : importDecl
  | worldDecl
  | fnDecl
  | physicsDecl
  | materialDecl
  | partDecl
  | grammarDecl
  | bodyDecl
  | mutationDecl
  | controllerDecl
  | lossDecl
  | evolveDecl
  | commandsDecl
  | trainDecl
  | requiresDecl
  ;

importDecl : 'import' STRING ';' ;

worldDecl : 'world' settingsBlock ;

evolveDecl : 'evolve' settingsBlock ;

// Robot-level commands and the task mixture that draws them.
commandsDecl : 'commands' settingsBlock ;

// Training one fixed body, without evolution.
trainDecl : 'train' settingsBlock ;

// The world a library is written for: `requires { dim = 3; commands = d vec2, r; }`.
requiresDecl : 'requires' settingsBlock ;

// ---- settings: `key = value, value ...;` and nested `name { ... }` blocks

settingsBlock : '{' (setting | nestedBlock)* '}' ;

setting : anyName '=' settingValue (',' settingValue)* ';' ;

// A value may carry a trailing word: `hidden = 32 tanh;`.
settingValue : expr IDENT? ;

nestedBlock : anyName settingsBlock ;

// Names that may also be keywords where no ambiguity arises (setting keys,
// named arguments): `physics = ...`, `normalized_sgd(step = 0.2)`.
anyName
  : IDENT | 'import' | 'world' | 'fn' | 'physics' | 'set' | 'step' | 'for'
  | 'in' | 'let' | 'return' | 'part' | 'grammar' | 'body' | 'mutation'
  | 'until' | 'controller' | 'loss' | 'evolve' | 'commands' | 'train' | 'requires'
  | 'material'
  ;

// ---- functions and statements

fnDecl : 'fn' IDENT '(' (param (',' param)*)? ')' '->' typeName '{' stmt* '}' ;

param : IDENT ':' typeName ;

typeName : IDENT ;

stmt
  : letStmt
  | forStmt
  | returnStmt
  | assignStmt
  ;

letStmt : 'let' IDENT (':' typeName)? '=' expr ';' ;

// `for p in point { ... }`; `for n in stencil(node, base, 3) { ... }` (the
// nodes of a grid set around a computed position: docs/language.md, Grids).
forStmt : 'for' IDENT 'in' IDENT ('(' expr (',' expr)* ')')? '{' stmt* '}' ;

returnStmt : 'return' expr ';' ;

assignStmt : expr op=('=' | '+=' | '-=') expr ';' ;

// ---- physics

physicsDecl : 'physics' IDENT '{' physicsItem* '}' ;

physicsItem
  : setDecl
  | stepDecl
  ;

// `set node: grid { ... }`: a set whose elements are the world's grid nodes.
setDecl : 'set' IDENT ('(' endpoint (',' endpoint)* ')')? (':' IDENT)? '{' fieldDecl* '}' ;

endpoint : IDENT ':' IDENT ;

// `state x: vec2;`: the first word is the field kind.
fieldDecl : anyName IDENT ':' typeName ('=' expr)? ';' ;

stepDecl : 'step' '{' stmt* '}' ;

// ---- bodies

// `material soft { stiffness = 5e3; colour = "#7fb2e5"; }`
materialDecl : 'material' IDENT settingsBlock ;

partDecl : 'part' IDENT '{' (partParam | setting)* '}' ;

// `param len = 1 in 0.5 .. 2;` (the first word must read `param`; it stays
// a plain name elsewhere).
partParam : IDENT IDENT '=' expr 'in' expr '..' expr ';' ;

grammarDecl : 'grammar' IDENT '{' (grammarLimit | setting | production)* '}' ;

// `limit Leg = 4;`, `depth Limb = 3;`, `scale Limb = 0.7;` (the first word must
// read limit, depth or scale).
grammarLimit : IDENT IDENT '=' expr ';' ;

production : IDENT '->' alternative ('|' alternative)* ';' ;

// `part<attach, angle = LO .. HI>(bindings) @ weight`
alternative : IDENT ('<' attachSpec '>')? ('(' (portBinding (',' portBinding)*)? ')')? ('@' expr)? ;

// `<top>`, `<top, angle = -30 .. 30>`, `<top, turn = 0>`, or options alone
// (`<angle = -30 .. 30>`: the attach port implied). Bounds are signed
// numbers, so that `>` never reads as an operator.
attachSpec
  : IDENT (',' attachOption)*
  | attachOption (',' attachOption)*
  ;

// `angle = LO .. HI` or `turn = K` (the first word must read angle / turn).
attachOption : IDENT '=' angleBound ('..' angleBound)? ;

angleBound : ('-' | '+')? NUMBER ;

// `port: Sym`, `port: Sym?`, `port: _`, `[a, b]: Sym`, `[a, b]: Sym?`
portBinding : (IDENT | '[' IDENT ',' IDENT ']') ':' IDENT optional='?'? ;

bodyDecl : 'body' (IDENT | 'grammar') IDENT settingsBlock ;

// `flip cell p = 1 / cells until changed;`
mutationDecl : 'mutation' '{' mutationRule* '}' ;

mutationRule : IDENT+ '=' expr ('until' IDENT)? ';' ;

// ---- learning

controllerDecl : 'controller' IDENT '{' (letStmt | setting)* '}' ;

lossDecl
  : 'loss' IDENT '=' expr ';'
  | 'loss' IDENT '{' stmt* '}'
  ;

// ---- expressions, highest precedence first

expr
  : primary                                          # primaryExpr
  | expr '.' IDENT                                   # memberExpr
  | expr '[' expr ']'                                # indexExpr
  | op=('-' | '+' | '!') expr                        # unaryExpr
  | expr op=('*' | '/') expr                         # binaryExpr
  | expr op=('+' | '-') expr                         # binaryExpr
  | expr op=('<' | '<=' | '>' | '>=') expr           # binaryExpr
  | expr op=('==' | '!=') expr                       # binaryExpr
  | expr op='&&' expr                                # binaryExpr
  | expr op='||' expr                                # binaryExpr
  | 'if' expr 'then' expr 'else' expr                # ifExpr
  ;

primary
  : NUMBER                                           # numberLit
  | ('true' | 'false')                               # boolLit
  | STRING                                           # stringLit
  | IDENT '(' IDENT 'in' IDENT '(' expr (',' expr)* ')' ':' expr ')' # stencilCall
  | IDENT '(' IDENT 'in' expr '..' expr ':' expr ')' # windowCall
  | IDENT '(' (callArg (',' callArg)*)? ')'          # call
  | (IDENT | 'world' | 'loss')                       # name
  | '(' expr ')'                                     # paren
  | '(' expr (',' expr)+ ','? ')'                    # tuple
  | '[' (expr (',' expr)* ','?)? ']'                 # list
  ;

callArg : (anyName '=')? expr ;

// ---- lexer

NUMBER : [0-9]+ ('.' [0-9]+)? ([eE] [+-]? [0-9]+)? ;
STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* '"' ;
IDENT : [a-zA-Z_] [a-zA-Z_0-9]* ;

// Comments stay in the token stream, off the parser's channel, for evoc fmt.
LINE_COMMENT : '//' ~[\r\n]* -> channel(HIDDEN) ;
BLOCK_COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;
WS : [ \t\r\n]+ -> skip ;
