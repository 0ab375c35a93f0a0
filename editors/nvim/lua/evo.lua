-- Neovim's built-in LSP client for evoc's language server (`evoc lsp`, LSP
-- over stdio) on .evo files, for Neovim 0.7 and later (editors/README.md).
--
--   require('evo').setup({
--     cmd = { '/path/to/evoc', 'lsp', '--stdlib', '/path/to/stdlib' },
--     root_markers = { '.git' },  -- the root: the nearest folder holding one, else the file's folder
--     autostart = true,           -- false: only the filetype, no server
--   })
--
-- plugin/evo.lua calls setup() with these defaults unless the user's config
-- has called it first; `vim.g.evo_lsp_cmd` overrides the default command.
local M = {}

M.defaults = {
  cmd = { 'evoc', 'lsp' },
  root_markers = { '.git' },
  autostart = true,
}

-- The options setup() was given, merged with the defaults; nil before setup().
M.config = nil

-- Client ids by root folder, for Neovim 0.7 (0.8's vim.lsp.start reuses a
-- client with the same name and root by itself).
local clients = {}

local warned = false

-- The folder above the nearest root marker (a worktree's .git is a file),
-- else the file's own folder.
local function root_dir(fname)
  local dir = vim.fn.fnamemodify(fname, ':p:h')
  for _, marker in ipairs(M.config.root_markers) do
    local found = vim.fn.finddir(marker, dir .. ';')
    if found == '' then
      found = vim.fn.findfile(marker, dir .. ';')
    end
    if found ~= '' then
      local path = vim.fn.fnamemodify(found, ':p'):gsub('/$', '')
      return vim.fn.fnamemodify(path, ':h')
    end
  end
  return dir
end

--- Starts (or reuses) the server for buffer `bufnr` and attaches it.
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local cmd = M.config.cmd
  if vim.fn.executable(cmd[1]) ~= 1 then
    if not warned then
      warned = true
      vim.notify(
        ("evo: '%s' is not an executable; set cmd in require('evo').setup{} or g:evo_lsp_cmd"):format(cmd[1]),
        vim.log.levels.WARN
      )
    end
    return
  end
  local fname = vim.api.nvim_buf_get_name(bufnr)
  local root = fname ~= '' and root_dir(fname) or vim.fn.getcwd()
  local config = { name = 'evoc', cmd = cmd, root_dir = root }
  if vim.lsp.start then
    vim.lsp.start(config, { bufnr = bufnr })
    return
  end
  local id = clients[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(config)
    clients[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

--- Registers the `evo` filetype for *.evo and, unless `autostart` is false,
--- starts the server on every evo buffer. Calling it again replaces the
--- earlier settings.
function M.setup(opts)
  opts = opts or {}
  local defaults = vim.deepcopy(M.defaults)
  if vim.g.evo_lsp_cmd then
    defaults.cmd = vim.g.evo_lsp_cmd
  end
  M.config = vim.tbl_extend('force', defaults, opts)

  local group = vim.api.nvim_create_augroup('evo', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
    group = group,
    pattern = '*.evo',
    command = 'setfiletype evo',
  })
  if not M.config.autostart then
    return
  end
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = 'evo',
    callback = function(args)
      M.start(args.buf)
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype == 'evo' then
      M.start(bufnr)
    end
  end
end

return M
