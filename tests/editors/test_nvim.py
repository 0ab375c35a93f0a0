#!/usr/bin/env python3
# Loads editors/nvim into a headless Neovim (skipped, exit 77, where nvim is
# missing): a .evo file gets the evo filetype and syntax without an error,
# a keyword is highlighted as one, and plugin/evo.lua starts the language
# server (fake_lsp.py standing in for `evoc lsp`, through g:evo_lsp_cmd) at
# the git root and sends it the file.
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]

CHECK = r"""
local function clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = 0 })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(0))
end
local ok = vim.wait(10000, function() return #clients() > 0 end, 50)
local client = clients()[1]
local line = vim.fn.search('^import', 'n')
local out = {
  filetype = vim.bo.filetype,
  syntax = vim.b.current_syntax,
  import_group = vim.fn.synIDattr(vim.fn.synID(line, 1, 1), 'name'),
  attached = ok,
  client = client and client.name or '',
  root = client and client.config.root_dir or '',
  errmsg = vim.v.errmsg,
}
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.EVO_NVIM_OUT)
vim.wait(2000, function() return vim.fn.filereadable(vim.env.EVO_LSP_LOG) == 1
  and table.concat(vim.fn.readfile(vim.env.EVO_LSP_LOG), '\n'):find('didOpen') ~= nil end, 50)
"""


def main():
    nvim = shutil.which("nvim")
    if not nvim:
        print("nvim not found: skipped")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        out, log, check = tmp / "out.json", tmp / "lsp.log", tmp / "check.lua"
        check.write_text(CHECK)
        server = [sys.executable, str(ROOT / "tests" / "editors" / "fake_lsp.py"), str(log)]
        cmd = [
            nvim, "--headless", "-u", "NONE", "-i", "NONE",
            "--cmd", f"set rtp+={ROOT / 'editors' / 'nvim'}",
            "--cmd", "let g:evo_lsp_cmd = " + json.dumps(server),
            "-c", "filetype plugin on", "-c", "syntax on", "-c", "runtime plugin/evo.lua",
            "-c", f"edit {ROOT / 'examples' / 'eldir_small.evo'}",
            "-c", f"luafile {check}", "-c", "qa!",
        ]
        env = dict(os.environ, EVO_NVIM_OUT=str(out), EVO_LSP_LOG=str(log))
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=tmp, env=env)
        print(subprocess.run([nvim, "--version"], capture_output=True, text=True).stdout.splitlines()[0])
        problems = []
        if run.returncode != 0 or run.stderr.strip():
            problems.append(f"nvim exited {run.returncode}, stderr: {run.stderr.strip()!r}")
        got = json.loads(out.read_text()) if out.exists() else {}
        print("nvim:", got)
        want = {"filetype": "evo", "syntax": "evo", "import_group": "evoImport", "attached": True,
                "client": "evoc", "root": str(ROOT), "errmsg": ""}
        for key, value in want.items():
            if got.get(key) != value:
                problems.append(f"{key}: {got.get(key)!r}, expected {value!r}")
        methods = log.read_text().split("\n") if log.exists() else []
        print("server got:", methods)
        if not methods or not methods[0].startswith("initialize " + ROOT.as_uri()):
            problems.append("the server was not initialized at the repository root")
        if "textDocument/didOpen" not in methods:
            problems.append("the server was not sent the file (textDocument/didOpen)")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
