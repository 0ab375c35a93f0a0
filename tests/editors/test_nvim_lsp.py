#!/usr/bin/env python3
# `evoc lsp` with a real client (docs/editors.md): a headless Neovim with
# editors/nvim on its runtime path opens a .evo file with a misspelt setting,
# receives the checker's diagnostic at the right line and column, jumps to
# the physics' definition in the stdlib, and gets the world's setting keys
# as completions. Skipped (exit 77) where nvim is missing.
#   test_nvim_lsp.py EVOC_BINARY
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]

SCRIPT = r"""
local out = {}
local function clients()
  if vim.lsp.get_clients then return vim.lsp.get_clients({ bufnr = 0 }) end
  return vim.tbl_values(vim.lsp.buf_get_clients(0))
end
out.attached = vim.wait(10000, function() return #clients() > 0 end, 20)
-- The diagnostic of the misspelt key.
vim.wait(10000, function() return #vim.diagnostic.get(0) > 0 end, 20)
local d = vim.diagnostic.get(0)[1]
out.diagnostic = d and { line = d.lnum, col = d.col, message = d.message } or vim.NIL
-- Go to the definition of the physics named in the world block.
local src = vim.api.nvim_buf_get_name(0)
local line = vim.fn.search('mass_spring_friction', 'n')
vim.api.nvim_win_set_cursor(0, { line, vim.fn.match(vim.fn.getline(line), 'mass_spring_friction') + 3 })
vim.lsp.buf.definition()
vim.wait(10000, function() return vim.api.nvim_buf_get_name(0) ~= src end, 20)
out.definition = { file = vim.api.nvim_buf_get_name(0), line = vim.api.nvim_win_get_cursor(0)[1],
                   text = vim.fn.getline('.') }
-- Back to the file: type the start of a key in the world block, complete it.
vim.cmd('buffer ' .. vim.fn.bufnr(src))
local world = vim.fn.search('^world {', 'n')
vim.api.nvim_buf_set_lines(0, world, world, false, { '  gra' })
vim.wait(300)
local params = { textDocument = { uri = vim.uri_from_bufnr(0) }, position = { line = world, character = 5 } }
local res = vim.lsp.buf_request_sync(0, 'textDocument/completion', params, 10000) or {}
out.completion = {}
for _, r in pairs(res) do
  local items = r.result and (r.result.items or r.result) or {}
  for _, it in ipairs(items) do table.insert(out.completion, it.label) end
end
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.EVO_NVIM_OUT)
"""


def main():
    nvim = shutil.which("nvim")
    if not nvim:
        print("nvim not found: skipped")
        return 77
    evoc = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        text = (ROOT / "examples" / "eldir_small.evo").read_text()
        broken = text.replace("gravity = -4.8;", "gravty = -4.8;")
        assert broken != text
        evo = tmp / "broken.evo"
        evo.write_text(broken)
        lines = broken.split("\n")
        want_line = next(i for i, l in enumerate(lines) if "gravty" in l)
        want_col = lines[want_line].index("gravty")
        out, script = tmp / "out.json", tmp / "check.lua"
        script.write_text(SCRIPT)
        cmd = [
            nvim, "--headless", "-u", "NONE", "-i", "NONE",
            "--cmd", f"set rtp+={ROOT / 'editors' / 'nvim'}",
            "--cmd", "let g:evo_lsp_cmd = " + json.dumps([evoc, "lsp"]),
            "-c", "filetype plugin on", "-c", "runtime plugin/evo.lua",
            "-c", f"edit {evo}", "-c", f"luafile {script}", "-c", "qa!",
        ]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=90, cwd=tmp,
                             env=dict(os.environ, EVO_NVIM_OUT=str(out)))
        got = json.loads(out.read_text()) if out.exists() else {}
        print("nvim:", json.dumps(got)[:2000])
        problems = []
        if run.returncode != 0:
            problems.append(f"nvim exited {run.returncode}: {run.stderr.strip()!r}")
        if not got.get("attached"):
            problems.append("evoc lsp did not attach")
        d = got.get("diagnostic") or {}
        if (d.get("line"), d.get("col")) != (want_line, want_col):
            problems.append(f"diagnostic at {d.get('line')}:{d.get('col')}, expected {want_line}:{want_col}")
        if "gravity" not in d.get("message", ""):
            problems.append(f"the diagnostic does not suggest 'gravity': {d.get('message')!r}")
        df = got.get("definition", {})
        if not df.get("file", "").endswith("stdlib/physics/mass_spring.evo") or \
                "physics mass_spring_friction" not in df.get("text", ""):
            problems.append(f"the definition jump ended at {df}")
        comp = got.get("completion", [])
        if "gravity" not in comp or "physics" not in comp:
            problems.append(f"no world setting keys among the completions: {comp}")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
