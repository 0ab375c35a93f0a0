" Vim syntax for evoc's .evo files (Vim and Neovim; editors/README.md).
" The keyword groups are those of editors/evo.tmLanguage.json, taken from
" grammar/Evo.g4; tests/editors/test_grammar.py checks that they agree.
if exists('b:current_syntax')
  finish
endif
let s:cpo_save = &cpo
set cpo&vim

" Keywords of grammar/Evo.g4. A keyword also used as a setting key
" (`physics = ...`) stays a keyword here: Vim gives keywords priority.
syn keyword evoImport       import
syn keyword evoDeclaration  fn physics material part grammar controller set loss nextgroup=evoDeclName skipwhite
syn keyword evoDeclaration  world evolve commands train requires step body mutation let
syn keyword evoControl      for in until return
syn keyword evoConditional  if then else
syn keyword evoBoolean      true false

" Built-in types, the builtins of compiler/sema/Calls.cpp, and pi.
syn keyword evoType         scalar bool vec2 vec3 mat2 mat3
syn keyword evoBuiltin      norm dot clamp abs min max exp log sin cos tanh sqrt pow floor
syn keyword evoBuiltin      transpose det trace outer polar_rotation
syn keyword evoBuiltin      sum mean sin_waves repeat part_mean push_out in_contact
syn keyword evoBuiltin      ground_height ground_normal ground_gap ground_speed
syn keyword evoBuiltin      contact_normal contact_gap contact_speed
syn keyword evoConstant     pi

" The name a declaration introduces: `fn NAME`, `part NAME`, `loss NAME`, ...
syn match evoDeclName       "\h\w*" contained

" Words that are keywords in one place only: field kinds (`state x: vec2;`),
" a part's gene (`param len = 1 in 0.5 .. 2;`) and a grammar's limits.
syn match evoModifier       "\<\%(state\|temp\|param\|input\)\>\ze\s\+\h\w*\s*:"
syn match evoModifier       "\<\%(param\|limit\|depth\|scale\)\>\ze\s\+\h\w*\s*=\%(=\)\@!"

" Setting keys and named arguments: `dt = 0.004;`, `adam(lr = 3e-3)`.
syn match evoKey            "\%(\.\)\@<!\<\h\w*\ze\s*=\%(=\)\@!"

syn match evoNumber         "\<\d\+\>"
syn match evoFloat          "\<\d\+\%(\.\d\+\%([eE][+-]\=\d\+\)\=\|[eE][+-]\=\d\+\)\>"
syn match evoOperator       "->\|\.\.\|[-+]=\|[=!<>]=\|&&\|||\|[-+*/<>!=@?|]"

syn match evoEscape         +\\.+ contained
syn region evoString        start=+"+ skip=+\\.+ end=+"+ end=+$+ oneline contains=evoEscape

syn match evoTodo           "\<\%(TODO\|FIXME\|XXX\)\>" contained
syn match evoLineComment    "//.*$" contains=evoTodo,@Spell
syn region evoBlockComment  start="/\*" end="\*/" contains=evoTodo,@Spell fold

" Blocks, for foldmethod=syntax.
syn region evoBlock         start="{" end="}" transparent fold

hi def link evoImport       Include
hi def link evoDeclaration  Structure
hi def link evoControl      Statement
hi def link evoConditional  Conditional
hi def link evoBoolean      Boolean
hi def link evoType         Type
hi def link evoBuiltin      Function
hi def link evoConstant     Constant
hi def link evoDeclName     Function
hi def link evoModifier     StorageClass
hi def link evoKey          Identifier
hi def link evoNumber       Number
hi def link evoFloat        Float
hi def link evoOperator     Operator
hi def link evoEscape       SpecialChar
hi def link evoString       String
hi def link evoTodo         Todo
hi def link evoLineComment  Comment
hi def link evoBlockComment Comment

let b:current_syntax = 'evo'
let &cpo = s:cpo_save
unlet s:cpo_save
