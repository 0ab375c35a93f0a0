-- Loads editors/nvim/lua/evo.lua with its defaults (the evo filetype, and
-- `evoc lsp` on .evo buffers) unless the user's config has called
-- require('evo').setup() already. g:evo_no_lsp = 1 keeps the filetype only.
if vim.g.loaded_evo then
  return
end
vim.g.loaded_evo = true
local evo = require('evo')
if not evo.config then
  local off = vim.g.evo_no_lsp
  evo.setup({ autostart = off == nil or off == 0 or off == false })
end
