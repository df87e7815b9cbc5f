;;; ifr-mode.el --- Major mode for ifr capacity models -*- lexical-binding: t; -*-

;; Version: 0.1
;; Package-Requires: ((emacs "27.1"))
;; Keywords: languages
;; URL: https://github.com/

;;; Commentary:

;; Colours .ifr files (keywords, numbers, quantities and their units, `in UNIT',
;; strings, docstrings, comments, definitions, calls) and registers `ifr lsp'
;; with eglot, which then gives diagnostics, hover, completion, rename,
;; formatting and (Emacs 29+, `eglot-inlay-hints-mode') inlay hints.
;;
;;   (add-to-list 'load-path "/path/to/ifr/editors/emacs")
;;   (require 'ifr-mode)
;;   (add-hook 'ifr-mode-hook #'eglot-ensure)

;;; Code:

(defgroup ifr nil "Major mode for ifr models." :group 'languages)

(defconst ifr-keywords
  '("use" "section" "fn" "solve" "on" "check" "within" "table" "vary" "over" "by" "to" "show"
    "scenario" "if" "then" "else" "for" "in" "as" "na")
  "The keywords of ifr.")

(defconst ifr--keyword-re (regexp-opt (append ifr-keywords '("and" "or" "not")) 'words))

(defconst ifr--number-re "\\_<[0-9][0-9_]*\\(?:\\.[0-9_]+\\)?\\(?:[eE][+-]?[0-9]+\\)?"
  "A number.")

;; In a unit a dot comes only before a digit (`s^0.5'), so `1 GB/s..1 TB/s' is two quantities.
(defconst ifr--unit-re
  "\\(?:[[:alpha:]_]\\(?:[[:alnum:]_]\\)*\\)\\(?:[*/^]\\(?:[[:alnum:]_^]\\|\\.[0-9]\\)+\\)*"
  "A unit.")

(defconst ifr-font-lock-keywords
  `(;; `in UNIT' at the end of a statement
    (,(concat "\\_<\\(in\\)[ \t]+\\(\\(?:1/\\)?\\(?:" ifr--unit-re "\\|([^)\n]*)\\)\\|%\\)[ \t]*\\(?:#\\|,\\|}\\|$\\)")
     (1 font-lock-keyword-face) (2 font-lock-type-face))
    ;; a quantity: a number, a space and a unit that is no keyword
    (,(concat "\\(" ifr--number-re "\\)[ \t]+\\(" ifr--unit-re "\\)")
     (1 font-lock-constant-face)
     (2 (unless (member (match-string 2) (append ifr-keywords '("and" "or" "not"))) font-lock-type-face)))
    (,(concat ifr--number-re "%?") . font-lock-constant-face)
    ("^[ \t]*fn[ \t]+\\([[:alpha:]_][[:alnum:]_]*\\)" 1 font-lock-function-name-face)
    (,ifr--keyword-re . font-lock-keyword-face)
    ("^[ \t]*\\([[:alpha:]_][[:alnum:]_]*\\)[ \t]*=[^=]" 1 font-lock-variable-name-face)
    ("\\_<\\([[:alpha:]_][[:alnum:]_]*\\)[ \t]*(" 1 font-lock-function-name-face))
  "What `ifr-mode' colours.")

(defvar ifr-mode-syntax-table
  (let ((table (make-syntax-table)))
    (modify-syntax-entry ?# "<" table)
    (modify-syntax-entry ?\n ">" table)
    (modify-syntax-entry ?\" "\"" table)
    (modify-syntax-entry ?_ "_" table)
    (modify-syntax-entry ?. "." table)
    (dolist (c '(?+ ?- ?* ?/ ?^ ?= ?< ?> ?~ ?%))
      (modify-syntax-entry c "." table))
    table)
  "Syntax table of `ifr-mode': `#' comments, double-quoted strings (docstrings are three).")

;;;###autoload
(define-derived-mode ifr-mode prog-mode "ifr"
  "Major mode for ifr capacity models (.ifr)."
  :syntax-table ifr-mode-syntax-table
  (setq-local comment-start "# ")
  (setq-local comment-start-skip "#+[ \t]*")
  (setq-local font-lock-defaults '(ifr-font-lock-keywords)))

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.ifr\\'" . ifr-mode))

(with-eval-after-load 'eglot
  (defvar eglot-server-programs)
  (add-to-list 'eglot-server-programs '(ifr-mode . ("ifr" "lsp"))))

(provide 'ifr-mode)
;;; ifr-mode.el ends here
