-- Which root the documented config gives each file: `nvim -l roots.lua CONFIG OUT FILE...`.
-- Buffers get names but no filetype, so no client starts; root_dir is called directly.
local config, out = _G.arg[1], _G.arg[2]
dofile(config)
local roots = {}
for i = 3, #_G.arg do
  local file = _G.arg[i]
  local buf = vim.api.nvim_create_buf(false, false)
  vim.api.nvim_buf_set_name(buf, file)
  local root = vim.NIL
  vim.lsp.config.memdir.root_dir(buf, function(dir) root = dir end)
  roots[file] = root
end
local f = assert(io.open(out, 'w'))
f:write(vim.json.encode(roots))
f:close()
