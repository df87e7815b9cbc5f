" .ifr files are ifr models
autocmd BufRead,BufNewFile *.ifr setfiletype ifr
