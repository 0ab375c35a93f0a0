;;; evo-mode.el --- Major mode for evoc's .evo files  -*- lexical-binding: t; -*-

;;; Commentary:

;; Highlighting, comments and indentation for the evoc language (.evo
;; files), and an eglot entry that runs evoc's language server (`evoc lsp',
;; LSP over stdio).  The keyword lists are those of grammar/Evo.g4, grouped
;; as in editors/evo.tmLanguage.json; tests/editors/test_grammar.py checks
;; that they agree.  Installing it: editors/README.md.
;;
;;   (add-to-list 'load-path "/path/to/evoc/editors/emacs")
;;   (require 'evo-mode)
;;   ;; optional, before eglot loads: (setq evo-lsp-command '("/path/to/evoc" "lsp"))
;;   (add-hook 'evo-mode-hook #'eglot-ensure)   ; start the server on every .evo file

;;; Code:

(defgroup evo nil
  "The evoc language (.evo files)."
  :group 'languages
  :prefix "evo-")

(defcustom evo-indent-offset 2
  "Columns a block's contents are indented by, per level of nesting."
  :type 'integer)

(defcustom evo-lsp-command '("evoc" "lsp")
  "The language server's command line, for eglot.
Read when eglot loads; add \"--stdlib\" \"DIR\" to search DIR for imports."
  :type '(repeat string))

;; Keywords of grammar/Evo.g4, in the groups of the TextMate grammar.
(defconst evo-mode-import-keywords '("import"))
(defconst evo-mode-declaration-keywords
  '("world" "evolve" "commands" "train" "requires" "fn" "physics" "set" "step"
    "part" "grammar" "body" "mutation" "controller" "loss" "material" "let"))
(defconst evo-mode-control-keywords '("for" "in" "until" "return"))
(defconst evo-mode-conditional-keywords '("if" "then" "else"))
(defconst evo-mode-constant-keywords '("true" "false"))

;; Built-in types, and the builtins of compiler/sema/Calls.cpp.
(defconst evo-mode-types '("scalar" "bool" "vec2" "vec3" "mat2" "mat3"))
(defconst evo-mode-builtins
  '("norm" "dot" "clamp" "abs" "min" "max" "exp" "log" "sin" "cos" "tanh"
    "sqrt" "pow" "floor" "transpose" "det" "trace" "outer" "polar_rotation" "sum" "mean" "sin_waves" "repeat" "part_mean"
    "push_out" "in_contact" "ground_height" "ground_normal" "ground_gap"
    "ground_speed" "contact_normal" "contact_gap" "contact_speed"))

(defvar evo-mode-syntax-table
  (let ((st (make-syntax-table)))
    ;; `//' to the end of the line and `/* ... */', as in C++.
    (modify-syntax-entry ?/ ". 124b" st)
    (modify-syntax-entry ?* ". 23" st)
    (modify-syntax-entry ?\n "> b" st)
    (modify-syntax-entry ?\" "\"" st)
    (modify-syntax-entry ?\\ "\\" st)
    (modify-syntax-entry ?_ "_" st)
    (dolist (c '(?+ ?- ?= ?< ?> ?! ?& ?| ?@ ?? ?. ?, ?: ?\;))
      (modify-syntax-entry c "." st))
    st)
  "Syntax table of `evo-mode'.")

(defun evo-mode--words (words)
  "A regexp matching any of WORDS as a whole symbol, in group 1."
  (concat "\\_<" (regexp-opt words t) "\\_>"))

(defconst evo-mode--name "\\([A-Za-z_][A-Za-z0-9_]*\\)")

(defvar evo-font-lock-keywords
  `(;; the names declarations introduce (first: a rule does not repaint
    ;; what an earlier one painted)
    (,(concat "\\_<\\(?:fn\\|loss\\)[ \t]+" evo-mode--name) 1 font-lock-function-name-face)
    (,(concat "\\_<\\(?:physics\\|material\\|part\\|grammar\\|controller\\|set\\)[ \t]+"
              evo-mode--name)
     1 font-lock-type-face)
    (,(concat "\\_<body[ \t]+" evo-mode--name "[ \t]+" evo-mode--name) 2 font-lock-type-face)
    ;; setting keys and named arguments, keywords too: `physics = ...;'
    (,(concat "\\_<" evo-mode--name "[ \t]*=\\(?:[^=]\\|$\\)") 1 font-lock-variable-name-face)
    ;; words that are keywords in one place only: `state x: vec2;'
    ("\\_<\\(state\\|temp\\|param\\|input\\)[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*:"
     1 font-lock-builtin-face)
    (,(evo-mode--words evo-mode-import-keywords) 1 font-lock-preprocessor-face)
    (,(evo-mode--words (append evo-mode-declaration-keywords evo-mode-control-keywords
                               evo-mode-conditional-keywords))
     1 font-lock-keyword-face)
    (,(evo-mode--words (append evo-mode-constant-keywords '("pi"))) 1 font-lock-constant-face)
    (,(evo-mode--words evo-mode-types) 1 font-lock-type-face)
    (,(concat (evo-mode--words evo-mode-builtins) "[ \t]*(") 1 font-lock-builtin-face)
    ("\\_<[0-9]+\\(?:\\.[0-9]+\\)?\\(?:[eE][-+]?[0-9]+\\)?\\_>" . font-lock-constant-face))
  "Highlighting for `evo-mode'.")

(defun evo-indent-line ()
  "Indent the current line by its depth in braces, brackets and parentheses."
  (interactive)
  (let* ((depth (save-excursion (car (syntax-ppss (line-beginning-position)))))
         (closing (save-excursion (back-to-indentation) (looking-at-p "[]})]")))
         (column (* evo-indent-offset (max 0 (- depth (if closing 1 0))))))
    (if (<= (current-column) (current-indentation))
        (indent-line-to column)
      (save-excursion (indent-line-to column)))))

;;;###autoload
(define-derived-mode evo-mode prog-mode "Evo"
  "Major mode for evoc's .evo files."
  :syntax-table evo-mode-syntax-table
  (setq-local comment-start "// ")
  (setq-local comment-end "")
  (setq-local comment-start-skip "\\(?://+\\|/\\*+\\)[ \t]*")
  (setq-local font-lock-defaults '(evo-font-lock-keywords))
  (setq-local indent-line-function #'evo-indent-line))

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.evo\\'" . evo-mode))

;; eglot (built into Emacs 29; from GNU ELPA before): `M-x eglot' in a .evo
;; buffer runs `evo-lsp-command', by default the same as
;; (add-to-list 'eglot-server-programs '(evo-mode "evoc" "lsp")).
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs (cons 'evo-mode evo-lsp-command)))

(provide 'evo-mode)

;;; evo-mode.el ends here
