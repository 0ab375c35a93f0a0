" Comments and indentation for evoc's .evo files (editors/README.md).
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal commentstring=//\ %s
setlocal comments=s1:/*,mb:*,ex:*/,://
setlocal shiftwidth=2 softtabstop=2 expandtab
setlocal autoindent smartindent
let b:undo_ftplugin = 'setlocal commentstring< comments< shiftwidth< softtabstop< expandtab< autoindent< smartindent<'
