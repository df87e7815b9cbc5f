" Vim syntax file for ifr models (.ifr): keywords, numbers, quantities and their units,
" `in UNIT`, strings, docstrings, comments, definitions, calls and operators.
" It reads as the TextMate grammar of editors/vscode does; `1 GB/s..1 TB/s` is two quantities.
if exists("b:current_syntax")
  finish
endif

syn case match

" Later items win where several match at one place; a keyword wins over any match, so `in` is a match.
syn keyword ifrKeyword use section fn solve on check within table vary over by to show scenario if then else for as na
syn keyword ifrLogical and or not
syn match ifrKeyword /\<in\>/
syn match ifrBareNumber /\<\d[0-9_]*\%(\.[0-9_]\+\)\=\%([eE][+-]\=\d\+\)\=\>/
syn match ifrPercent /\<\d[0-9_]*\%(\.[0-9_]\+\)\=%/
" A quantity: a number, a space and a unit (`25 GB/s`, `144 KiB/token`, `2 s^0.5`); in the unit a
" dot comes only before a digit, so the range `..` ends it.
syn match ifrNumber /\<\d[0-9_]*\%(\.[0-9_]\+\)\=\%([eE][+-]\=\d\+\)\=/ contained
syn match ifrUnit /\s\zs\%(\h\|[^\x00-\x7f]\)\w*\%([*/^]\%(\w\|\^\|\.\%(\d\)\@=\)\+\)*/ contained
syn match ifrQuantity /\<\d[0-9_]*\%(\.[0-9_]\+\)\=\%([eE][+-]\=\d\+\)\=\s\+\%(\%(use\|section\|fn\|solve\|on\|check\|within\|table\|vary\|over\|by\|to\|show\|scenario\|if\|then\|else\|and\|or\|not\|for\|in\|as\|na\)\>\)\@!\%(\h\|[^\x00-\x7f]\)\w*\%([*/^]\%(\w\|\^\|\.\%(\d\)\@=\)\+\)*/ contains=ifrNumber,ifrUnit
" `in UNIT` at the end of a statement: `in ms`, `in 1/s`, `in 1/(GPU*h)`, `in %`
syn match ifrDisplayKeyword /\<in\>/ contained
syn match ifrDisplay /\<in\s\+\%(1\/\)\=\%(\h\w*\|([^)]*)\)\%([*/^]\%(\w\|\^\|\.\%(\d\)\@=\|([^)]*)\)\+\)*\ze\s*\%(#\|,\|}\|$\)/ contains=ifrDisplayKeyword
syn match ifrDisplay /\<in\s\+%\ze\s*\%(#\|,\|}\|$\)/ contains=ifrDisplayKeyword
syn match ifrDefinition /^\s*\%(\%(use\|section\|fn\|solve\|on\|check\|within\|table\|vary\|over\|by\|to\|show\|scenario\|if\|then\|else\|and\|or\|not\|for\|in\|as\|na\)\>\)\@!\h\w*\ze\s*=\%(=\)\@!/
syn match ifrFunction /\<fn\s\+\zs\h\w*/
syn match ifrCall /\<\h\w*\ze\s*(/
syn match ifrOperator /==\|!=\|<=\|>=\|\.\.\|\*\*\|[-+*/^<>=~≈]/
syn region ifrString start=/"/ skip=/\\./ end=/"/ oneline
syn region ifrDocstring start=/"""/ end=/"""/ keepend
syn match ifrComment /#.*$/ contains=@Spell

hi def link ifrComment Comment
hi def link ifrDocstring String
hi def link ifrString String
hi def link ifrKeyword Keyword
hi def link ifrDisplayKeyword Keyword
hi def link ifrLogical Operator
hi def link ifrNumber Number
hi def link ifrBareNumber Number
hi def link ifrPercent Number
hi def link ifrUnit Type
hi def link ifrDisplay Type
hi def link ifrDefinition Identifier
hi def link ifrFunction Function
hi def link ifrCall Function
hi def link ifrOperator Operator

let b:current_syntax = "ifr"
