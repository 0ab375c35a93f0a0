" .evo files are evoc programs (editors/README.md).
autocmd BufRead,BufNewFile *.evo setfiletype evo
